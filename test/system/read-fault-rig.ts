// What the read-fault tests (storage-read-faults.test.ts) watch and count: /status answering
// throughout, the exit time on SIGTERM, the log's transitions, and the accounting of every report.
//
// Accounting: polled = the first device's cycles with values (/status, once it fell silent);
// delivered = distinct poll times (`ts`) the subscriber received; counted = the outbox's dropped
// total (/status, kept across a restart); queued = rows in the outbox file at the end, read on a
// fresh connection from the card's backing directory (not the sampler's connection, which follows
// a file moved aside). A report keeps its poll time wherever it goes (memory, file, a salvage, a
// restart), so a redelivery (the broker acknowledged it, the gateway sent it again after a
// restart) arrives with the same poll time and counter value as the first time: it counts once,
// as `redelivered`. A duplicate delivered as a new value would be one poll time arriving with
// another value: `newValueDuplicates`, always 0. (Counter values are no identity: two polls of
// a starved simulator can read the same value.)
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'libsql';
import type { FaultyFs } from '../helpers/faulty-fs.js';
import { sleep, type DeliveryRig, type GatewayProcess } from './delivery-rig.js';
import { getJson, statusAt, type GatewayLog } from './storage-rig.js';

export interface Watch {
  /** /status requests made and those that did not answer within 3 s. */
  asked: number;
  unanswered: number;
  readsFailingSeen: boolean;
  healthSaidReads: boolean;
  stop(): Promise<void>;
}

/** Asks /status (and /healthz while reads fail) every 300 ms until stopped: the daemon must answer every time. */
export function watchStatus(port: number): Watch {
  let running = true;
  const watch: Watch = {
    asked: 0, unanswered: 0, readsFailingSeen: false, healthSaidReads: false,
    stop: async () => {
      running = false;
      await loop;
    },
  };
  const loop = (async () => {
    while (running) {
      watch.asked += 1;
      const answer = await Promise.race([statusAt(port), sleep(3000).then(() => 'late' as const)]);
      if (answer === 'late' || answer === undefined) watch.unanswered += 1;
      else if (answer.outbox?.reads?.state === 'failing') {
        watch.readsFailingSeen = true;
        const health = await getJson<{ reasons: string[] }>(port, '/healthz').catch(() => undefined);
        if (health?.body.reasons.some((r) => r.startsWith('outbox reads failing'))) watch.healthSaidReads = true;
      }
      await sleep(300);
    }
  })();
  return watch;
}

/** SIGTERM and how long the exit took (Infinity, after a SIGKILL, when it took over 20 s). */
export async function stopTimed(gateway: GatewayProcess): Promise<{ code: number | null; ms: number }> {
  const start = Date.now();
  gateway.child.kill('SIGTERM');
  const code = await Promise.race([gateway.exited, sleep(20_000).then(() => 'hung' as const)]);
  if (code === 'hung') {
    gateway.child.kill('SIGKILL');
    return { code: null, ms: Infinity };
  }
  return { code, ms: Date.now() - start };
}

export interface Accounting {
  polled: number;
  delivered: number;
  counted: number;
  /** polled - delivered - counted: 0 in every run (negative: a report both delivered and counted). */
  unexplained: number;
  queued: number;
  redelivered: number;
  newValueDuplicates: number;
}

/** Rows in the live outbox file, read afresh beneath the fault layer (after the gateway stopped). */
export function rowsQueued(layer: FaultyFs): number {
  const file = join(layer.backing, 'state', 'outbox.sqlite');
  if (!existsSync(file)) return 0;
  const db = new Database(file);
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM outbox').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

export function account(rig: DeliveryRig, layer: FaultyFs, polled: number, counted: number): Accounting {
  if (rig.received.length !== rig.receivedTs.length) throw new Error('every counter report carries its poll time');
  const valueOfTs = new Map<number, number>();
  let newValueDuplicates = 0;
  rig.receivedTs.forEach((ts, i) => {
    const value = rig.received[i];
    if ((valueOfTs.get(ts) ?? value) !== value) newValueDuplicates += 1;
    valueOfTs.set(ts, value);
  });
  const delivered = valueOfTs.size;
  return {
    polled, delivered, counted, unexplained: polled - delivered - counted, queued: rowsQueued(layer),
    redelivered: rig.receivedTs.length - delivered, newValueDuplicates,
  };
}

/** A pair of log lines as the sequence of transitions, e.g. ['failing', 'back']. */
export function transitions(log: GatewayLog, failing: string, back: string): string[] {
  return log.lines().flatMap((l) => (l.msg === failing ? ['failing'] : l.msg === back ? ['back'] : []));
}

/** Said once each way: alternating, starting with 'failing', at most `episodes` of them. */
export function onceEachWay(seen: readonly string[], episodes = 1): boolean {
  return seen.length <= 2 * episodes && seen.every((t, i) => t === (i % 2 === 0 ? 'failing' : 'back'));
}

/** "backlog replayed" lines logged while reads were failing. */
export function replayedTooEarly(log: GatewayLog): Record<string, unknown>[] {
  let readsFailing = false;
  const early: Record<string, unknown>[] = [];
  for (const line of log.lines()) {
    if (line.msg === 'outbox reads failing') readsFailing = true;
    if (line.msg === 'outbox reads back') readsFailing = false;
    if (line.msg === 'outbox backlog replayed' && readsFailing) early.push(line);
  }
  return early;
}

export async function settleFor(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (condition()) return true;
    await sleep(200);
  }
  return condition();
}
