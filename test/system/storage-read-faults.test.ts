// Read errors of an SD card under a running gateway, made for real: the state directory is a FUSE
// layer (test/helpers/faulty-fs.ts) whose reads of the middle of outbox.sqlite fail with EIO while
// a backlog waits on disk, then heal (or not). Every run counts: reports polled against reports
// delivered (distinct poll times), counted as dropped or left in the file: 0 unexplained. /status
// answers throughout, "reads failing" and "reads back" are logged once each, the backlog is never
// "replayed" while its rows wait, and SIGTERM exits within 5 s. Needs root and /dev/fuse (skipped,
// with the reason, without them).
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/mosquitto.js';
import { checkpoint, touch } from '../helpers/outbox-file.js';
import { FaultyFs, fuseMissing } from '../helpers/faulty-fs.js';
import { skipUnless } from '../helpers/skips.js';
import { DeliveryRig, settle, sleep, type GatewayProcess } from './delivery-rig.js';
import { GatewayLog, getJson, silenceDevice, statusAt, statusWhen } from './storage-rig.js';

const missing = fuseMissing();

interface Watch {
  /** /status requests made and those that did not answer within 3 s. */
  asked: number;
  unanswered: number;
  readsFailingSeen: boolean;
  healthSaidReads: boolean;
  stop(): Promise<void>;
}

/** Asks /status and /healthz every 300 ms until stopped: the daemon must answer every time. */
function watchStatus(port: number): Watch {
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

/** SIGTERM and how long the exit took. */
async function stopTimed(gateway: GatewayProcess): Promise<{ code: number | null; ms: number }> {
  const start = Date.now();
  gateway.child.kill('SIGTERM');
  const code = await Promise.race([gateway.exited, sleep(20_000).then(() => 'hung' as const)]);
  if (code === 'hung') {
    gateway.child.kill('SIGKILL');
    return { code: null, ms: Infinity };
  }
  return { code, ms: Date.now() - start };
}

interface Accounting {
  polled: number;
  delivered: number;
  counted: number;
  left: number;
  unexplained: number;
  duplicates: number;
}

/** polled = delivered (distinct poll times) + counted (dropped) + left in the file; 0 unexplained. */
function account(rig: DeliveryRig, polled: number, counted: number): Accounting {
  const left = rig.outbox.pendingTs();
  const delivered = new Set(rig.receivedTs);
  const explained = new Set([...delivered, ...left]).size + counted;
  return { polled, delivered: delivered.size, counted, left: left.length, unexplained: Math.max(0, polled - explained), duplicates: rig.receivedTs.length - delivered.size };
}

describe('outbox reads failing on the state directory (FUSE layer, EIO)', skipUnless(missing === undefined, `${missing}: the read-fault layer is a FUSE filesystem`), () => {
  let rig: DeliveryRig | undefined;
  let fs: FaultyFs | undefined;
  let log: GatewayLog | undefined;
  afterEach(async () => {
    // FIELDGATE_KEEP_LOG=<file>: the last gateway log kept for a look after the run.
    if (rig && process.env.FIELDGATE_KEEP_LOG) copyFileSync(join(rig.dir, 'gateway.log'), process.env.FIELDGATE_KEEP_LOG);
    await rig?.close();
    log?.close();
    fs?.dispose();
    rig = undefined;
    fs = undefined;
    log = undefined;
  });

  /** The gateway on the FUSE layer, delivering, then a broker outage until `rows` wait on disk, checkpointed into the file. */
  async function backlogOnDisk(rows: number, outboxExtra?: string): Promise<{ r: DeliveryRig; port: number; file: string; gateway: GatewayProcess; log: GatewayLog; layer: FaultyFs }> {
    const layer = await FaultyFs.mount();
    fs = layer;
    const port = await freePort();
    const stateDir = join(layer.path, 'state');
    rig = await DeliveryRig.start({ stateDir, healthPort: port, logLevel: 'info', ...(outboxExtra ? { outboxExtra } : {}) });
    const r = rig;
    log = new GatewayLog(r.dir, 'gateway');
    const gateway = r.startGateway(log);
    await settle(() => r.received.length >= 20, 30_000);
    r.pipe.cutOff(true);
    await settle(() => r.outbox.pendingRows() >= rows, 120_000);
    const file = join(stateDir, 'outbox.sqlite');
    checkpoint(file);
    // Another connection's write: the gateway's connection drops its page cache (as a restart, or a
    // backlog larger than the cache, would have it) and reads the rows from the card.
    touch(file);
    return { r, port, file, gateway, log, layer };
  }

  function readTransitions(gatewayLog: GatewayLog): string[] {
    return gatewayLog.lines().flatMap((l) => (l.msg === 'outbox reads failing' ? ['failing'] : l.msg === 'outbox reads back' ? ['back'] : []));
  }

  /** Every "backlog replayed" line came after the reads were back, with no disk rows left. */
  function replayedTooEarly(gatewayLog: GatewayLog): Record<string, unknown>[] {
    let readsFailing = false;
    const early: Record<string, unknown>[] = [];
    for (const line of gatewayLog.lines()) {
      if (line.msg === 'outbox reads failing') readsFailing = true;
      if (line.msg === 'outbox reads back') readsFailing = false;
      if (line.msg === 'outbox backlog replayed' && readsFailing) early.push(line);
    }
    return early;
  }

  it.each(['before', 'at'] as const)('EIO on the middle of the file, starting %s the cloud\'s return, healing 10 s later: nothing lost, one line each way, status answers, SIGTERM < 5 s', async (moment) => {
    const { r, port, gateway, log: gatewayLog, layer } = await backlogOnDisk(400);
    const watch = watchStatus(port);
    if (moment === 'before') {
      await layer.failFraction('state/outbox.sqlite', 0.3, 0.55);
      await sleep(2000);
      r.pipe.cutOff(false);
    } else {
      r.pipe.cutOff(false);
      await layer.failFraction('state/outbox.sqlite', 0.3, 0.55);
    }
    await sleep(10_000);
    const eio = layer.eioCount();
    await layer.heal();
    const drained = await statusWhen(port, (s) => s.outbox?.onDisk === 0, 90_000);
    expect(drained?.outbox?.onDisk, 'the backlog goes out after the heal').toBe(0);
    const polled = await silenceDevice(r, port);
    const final = await statusWhen(port, (s) => s.outbox?.depth === 0, 30_000);
    await watch.stop();
    const exit = await stopTimed(gateway);
    r.outbox.sample();
    const counts = account(r, polled, final?.outbox?.dropped ?? -1);
    console.log(`read faults ${moment} the return: ${JSON.stringify(counts)}; ${eio} EIO; reads ${readTransitions(gatewayLog).join(', ')}; status ${watch.asked - watch.unanswered}/${watch.asked}; exit ${exit.code} in ${exit.ms} ms`);
    expect(eio, 'the fault bit').toBeGreaterThan(0);
    expect(counts.unexplained).toBe(0);
    expect(counts.counted, 'a transient fault costs nothing').toBe(0);
    expect(gatewayLog.messages('outbox file corrupt: moved aside, a fresh one is used')).toEqual([]);
    expect(readTransitions(gatewayLog)).toEqual(['failing', 'back']);
    expect(replayedTooEarly(gatewayLog)).toEqual([]);
    expect(watch.unanswered).toBe(0);
    expect(watch.readsFailingSeen && watch.healthSaidReads, '/status and /healthz said reads failing').toBe(true);
    expect(exit.code).toBe(0);
    expect(exit.ms).toBeLessThan(5000);
  }, 300_000);

  it('EIO that does not heal: the file given up after condemnAfterMs, its readable rows carried over, the rest counted; status answers, SIGTERM < 5 s; a restart on the healed card loses nothing more', async () => {
    const { r, port, gateway, log: gatewayLog, layer } = await backlogOnDisk(400, 'condemnAfterMs: 3000');
    const watch = watchStatus(port);
    await layer.failFraction('state/outbox.sqlite', 0.3, 0.55);
    r.pipe.cutOff(false);
    const moved = await settleFor(() => gatewayLog.messages('outbox file corrupt: moved aside, a fresh one is used').length > 0, 60_000);
    expect(moved, 'the file given up').toBe(true);
    const drained = await statusWhen(port, (s) => s.outbox?.onDisk === 0, 90_000);
    expect(drained?.outbox?.onDisk).toBe(0);
    // Every report polled by this run (the device falls silent); the next run polls none.
    const polled = await silenceDevice(r, port);
    await watch.stop();
    const exit = await stopTimed(gateway);
    // The card comes back: a restart on it.
    await layer.heal();
    const again = r.startGateway(log);
    const final = await statusWhen(port, (s) => s.outbox?.depth === 0, 60_000);
    const exitAgain = await stopTimed(again);
    r.outbox.sample();
    const line = gatewayLog.messages('outbox file corrupt: moved aside, a fresh one is used')[0];
    const counts = account(r, polled, final?.outbox?.dropped ?? -1);
    console.log(`read faults, no heal: ${JSON.stringify(counts)}; moved aside ${JSON.stringify({ salvaged: line?.salvaged, lost: line?.lost })}; status ${watch.asked - watch.unanswered}/${watch.asked}; exits ${exit.code} in ${exit.ms} ms, ${exitAgain.code} in ${exitAgain.ms} ms`);
    expect(counts.unexplained).toBe(0);
    expect(line).toMatchObject({ salvaged: expect.any(Number), lost: expect.any(Number) });
    expect(Number(line?.salvaged)).toBeGreaterThan(0);
    expect(Number(line?.lost)).toBe(counts.counted);
    expect(watch.unanswered).toBe(0);
    expect([exit.code, exitAgain.code]).toEqual([0, 0]);
    expect(Math.max(exit.ms, exitAgain.ms)).toBeLessThan(5000);
  }, 300_000);

  it('EIO through a restart: SIGTERM with the backlog unreadable exits within 5 s; the next start on the still-failing file counts what it cannot read; status answers', async () => {
    const { r, port, gateway, log: gatewayLog, layer } = await backlogOnDisk(400);
    await layer.failFraction('state/outbox.sqlite', 0.3, 0.55);
    r.pipe.cutOff(false);
    await statusWhen(port, (s) => s.outbox?.reads?.state === 'failing', 30_000);
    // Every report polled by this run (the device falls silent); the next run polls none.
    const polled = await silenceDevice(r, port);
    const exit = await stopTimed(gateway);
    const again = r.startGateway(log);
    await statusWhen(port, (s) => s.outbox !== undefined, 60_000);
    const watch = watchStatus(port);
    await sleep(3000);
    await layer.heal();
    const final = await statusWhen(port, (s) => s.outbox?.depth === 0, 90_000);
    await watch.stop();
    const exitAgain = await stopTimed(again);
    r.outbox.sample();
    const counts = account(r, polled, final?.outbox?.dropped ?? -1);
    console.log(`read faults through a restart: ${JSON.stringify(counts)}; moved aside ${gatewayLog.messages('outbox file corrupt: moved aside, a fresh one is used').length}; status ${watch.asked - watch.unanswered}/${watch.asked}; exits ${exit.code} in ${exit.ms} ms, ${exitAgain.code} in ${exitAgain.ms} ms`);
    expect(counts.unexplained).toBe(0);
    expect(watch.unanswered).toBe(0);
    expect([exit.code, exitAgain.code]).toEqual([0, 0]);
    expect(Math.max(exit.ms, exitAgain.ms)).toBeLessThan(5000);
  }, 300_000);
});

async function settleFor(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (condition()) return true;
    await sleep(200);
  }
  return condition();
}
