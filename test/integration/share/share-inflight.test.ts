// A share's requests in flight, against a recording RTU peer on a real pty line (line-tap.ts):
// clients that reconnect over and over never fill the bus queue (polls always find room) and what
// they left queued never reaches the line; a write whose reply was lost leaves no stale value in
// the cache; pipelined requests on one connection are answered in the order they came.
import { afterEach, describe, expect, it } from 'vitest';
import { truth } from '../../helpers/hostile-modbus.js';
import { mbap, rawClient } from '../../helpers/share-clients.js';
import { waitFor } from '../../helpers/wait.js';
import { startLineTap, type LineTap } from './line-tap.js';
import { startShareRig, type ShareRig } from './share-rig.js';
import { splitAnswers, startPoller, type Poller } from './share-traffic.js';

const rigs: ShareRig[] = [];
const pollers: Poller[] = [];
afterEach(async () => {
  for (const poller of pollers.splice(0)) await poller.stop();
  for (const rig of rigs.splice(0)) await rig.stop();
});

async function tapRig(share: Record<string, unknown>, pollEveryMs = 0): Promise<{ rig: ShareRig; tap: LineTap }> {
  let tap: LineTap | undefined;
  const rig = await startShareRig({ share, pollEveryMs }, async (path) => {
    tap = await startLineTap(path, [1, 2]);
    return () => tap!.stop();
  });
  rigs.push(rig);
  return { rig, tap: tap! };
}

/** Sends `frames` in one write on a fresh connection; the answers once `count` came. */
async function pipelined(port: number, frames: Buffer[], count = frames.length): Promise<Buffer[]> {
  const client = await rawClient(port);
  try {
    client.socket.write(Buffer.concat(frames));
    await waitFor(() => splitAnswers(client.received()).length >= count, { what: `${count} answers`, timeoutMs: 20_000 });
    return splitAnswers(client.received());
  } finally {
    client.socket.destroy();
  }
}

/** Fills the cache with a poll of unit 1's holding 0..9, then stops polling (the rig's loop). */
async function cacheFilled(rig: ShareRig): Promise<void> {
  await waitFor(() => rig.polls.ok >= 4, { what: 'polls running' });
  rig.stopPolling();
  const before = rig.polls.ok + rig.polls.failed;
  // The loop's last round may still be on the line: wait until no poll is counted any more.
  await waitFor(async () => {
    const seen = rig.polls.ok + rig.polls.failed;
    await new Promise((resolve) => setTimeout(resolve, 100));
    return rig.polls.ok + rig.polls.failed === seen && seen >= before;
  }, { what: 'polling stopped' });
}

describe('share clients that reconnect', () => {
  it('1,000 reconnects with 8 requests queued each: polls are never refused, the closed clients\' requests never reach the line', async () => {
    const { rig, tap } = await tapRig({ maxClients: 1, queueDepth: 8 });
    const poller = startPoller(rig.bus, 1);
    pollers.push(poller);
    await waitFor(() => poller.ok >= 4, { what: 'polls running' });
    const service = rig.shares.service('line')!;
    const connections = 1000;
    for (let c = 0; c < connections; c += 1) {
      const client = await rawClient(rig.port);
      // Unit 2, one register each at c * 8 + k: the peer tells which connection a frame came from.
      client.socket.end(Buffer.concat(Array.from({ length: 8 }, (_, k) => mbap(k, 2, [3, (c * 8 + k) >> 8, (c * 8 + k) & 0xff, 0, 1]))));
      await client.closed;
      // One client at a time: the next connects once the share let this one go.
      while (rig.shares.status()[0]!.clients > 0) await new Promise((resolve) => setImmediate(resolve));
      expect(poller.errors.filter((e) => e === 'QueueFullError')).toEqual([]);
    }
    await waitFor(() => rig.bus.stats().queueDepth === 0 && service.queued === 0, { what: 'queue drained', timeoutMs: 60_000 });
    const status = rig.shares.status()[0]!;
    expect(status).toMatchObject({ refusedConnections: 0, requests: connections * 8 });
    expect(poller.errors.filter((e) => e === 'QueueFullError')).toEqual([]);
    // What reached the line of a closed client is at most the request on the line as it left
    // (two if the machine stalled between that reply and the close).
    const perConnection = new Map<number, number>();
    for (const frame of tap.heard.filter((f) => f.bytes[0] === 2)) {
      const connection = Math.floor(frame.bytes.readUInt16BE(2) / 8);
      perConnection.set(connection, (perConnection.get(connection) ?? 0) + 1);
    }
    const onLine = [...perConnection.values()].reduce((a, b) => a + b, 0);
    expect(Math.max(0, ...perConnection.values())).toBeLessThanOrEqual(2);
    expect(onLine).toBeLessThanOrEqual(connections * 1.25);
    expect(status.cancelled).toBeGreaterThanOrEqual(connections * 8 - onLine - status.busy);
    expect(rig.bus.stats().cancelled).toBe(status.cancelled);
    expect(service.trackedClients).toBe(0);
    expect(rig.bus.ownersWaiting).toBe(0);
    expect(poller.ok).toBeGreaterThan(4);
    console.log(`reconnects: ${connections} connections, ${onLine} share frames on the line, ${status.cancelled} cancelled, ${status.busy} busy, polls ${poller.ok} ok`);
  }, 180_000);
});

describe('hostile: a client opening and closing connections without end', () => {
  it('10,000 connections with 8 requests each: the share stays within maxQueued, the queue drains, nothing of them stays', async () => {
    const maxQueued = 64;
    // 32 clients x 8 requests could hold 256 places in the bus queue: the cap keeps it to 64.
    const { rig, tap } = await tapRig({ maxClients: 32, queueDepth: 8, maxQueued });
    const poller = startPoller(rig.bus, 1);
    pollers.push(poller);
    await waitFor(() => poller.ok >= 4, { what: 'polls running' });
    const service = rig.shares.service('line')!;
    let deepest = 0;
    const sampler = setInterval(() => { deepest = Math.max(deepest, rig.bus.stats().queueDepth); }, 5);
    const connections = 10_000;
    let next = 0;
    const worker = async () => {
      for (let c = next++; c < connections; c = next++) {
        const client = await rawClient(rig.port);
        const requests = Buffer.concat(Array.from({ length: 8 }, (_, k) => mbap(k, 2, [3, 0, k, 0, 1])));
        // Every other one stays a moment (its requests hold their places in the bus queue meanwhile).
        if (c % 2 === 0) client.socket.end(requests);
        else {
          client.socket.write(requests);
          await new Promise((resolve) => setTimeout(resolve, 20));
          client.socket.destroy();
        }
        await client.closed;
      }
    };
    try {
      await Promise.all(Array.from({ length: 32 }, worker));
      await waitFor(() => rig.bus.stats().queueDepth === 0 && service.queued === 0 && rig.shares.status()[0]!.clients === 0,
        { what: 'the queue drained and every client gone', timeoutMs: 120_000 });
    } finally {
      clearInterval(sampler);
    }
    const status = rig.shares.status()[0]!;
    expect(poller.errors.filter((e) => e === 'QueueFullError')).toEqual([]);
    // The share's requests and a poll (RTU: one on the line, the rest waiting).
    expect(deepest).toBeLessThanOrEqual(maxQueued + 1);
    expect(status.busy).toBeGreaterThan(0);
    expect(service.trackedClients).toBe(0);
    expect(rig.bus.ownersWaiting).toBe(0);
    expect(status.forwarded).toBeLessThanOrEqual(status.requests);
    const shareFrames = tap.heard.filter((f) => f.bytes[0] === 2).length;
    const polls = poller.ok;
    await waitFor(() => poller.ok >= polls + 4, { what: 'polls after the attack' });
    console.log(`hostile: ${connections} connections (${status.refusedConnections} refused at once), ${status.requests} requests, ${shareFrames} on the line, ${status.cancelled} cancelled, ${status.busy} busy, deepest queue ${deepest}, cap logged ${rig.log.count('share requests at their cap in the bus queue: further ones answered server busy')}x, polls ${poller.ok} ok`);
  }, 300_000);
});

describe('share cache after a write whose reply was lost', () => {
  it('the device applied the write, the client got 0x0B; a read-back is never the old value from memory', async () => {
    const { rig, tap } = await tapRig({ access: 'read-write', cacheMs: 600_000 }, 20);
    await cacheFilled(rig);
    const before = truth(1, 3);
    const [cached] = await pipelined(rig.port, [mbap(1, 1, [3, 0, 3, 0, 1])]);
    expect([...cached!.subarray(7)]).toEqual([3, 2, before >> 8, before & 0xff]);
    tap.settings.loseReplies = 1;
    const [write] = await pipelined(rig.port, [mbap(2, 1, [6, 0, 3, 0x02, 0x2b])]); // 555
    expect([...write!.subarray(7)]).toEqual([0x86, 0x0b]);
    expect(tap.holding(1, 3)).toBe(555);
    // The unit is under its late-reply guard for a while (0x0A); then the read goes to the device.
    const answers: number[][] = [];
    await waitFor(async () => {
      const [read] = await pipelined(rig.port, [mbap(3, 1, [3, 0, 3, 0, 1])]);
      answers.push([...read!.subarray(7)]);
      return read![7] === 3;
    }, { what: 'a read-back of the written register', timeoutMs: 20_000 });
    expect(answers.slice(0, -1).every((a) => a[0] === 0x83 && a[1] === 0x0a)).toBe(true);
    expect(answers.at(-1)).toEqual([3, 2, 555 >> 8, 555 & 0xff]);
  });
});

describe('pipelined share requests on one connection', () => {
  it('a cached answer waits for the forwarded one before it; a refusal too', async () => {
    const { rig, tap } = await tapRig({ cacheMs: 600_000, units: { 1: 1, 2: 2 } }, 20);
    await cacheFilled(rig);
    const heardBefore = tap.heard.length;
    const answers = await pipelined(rig.port, [
      mbap(1, 2, [3, 0, 50, 0, 2]), // not polled: forwarded
      mbap(2, 1, [3, 0, 0, 0, 2]), // polled: from memory
      mbap(3, 9, [3, 0, 0, 0, 1]), // not mapped: 0x0A
      mbap(4, 1, [3, 0, 4, 0, 1]), // from memory
    ]);
    expect(answers.map((a) => a.readUInt16BE(0))).toEqual([1, 2, 3, 4]);
    expect([...answers[0]!.subarray(7)]).toEqual([3, 4, truth(2, 50) >> 8, truth(2, 50) & 0xff, truth(2, 51) >> 8, truth(2, 51) & 0xff]);
    expect([...answers[2]!.subarray(7)]).toEqual([0x83, 0x0a]);
    expect(tap.heard.length - heardBefore).toBe(1);
    expect(rig.shares.status()[0]).toMatchObject({ fromCache: 2, forwarded: 1 });
  });

  it('a read pipelined after a write sees the write: answered in order, never the value from before it', async () => {
    const { rig } = await tapRig({ access: 'read-write', cacheMs: 600_000 }, 20);
    await cacheFilled(rig);
    const answers = await pipelined(rig.port, [
      mbap(1, 1, [3, 0, 3, 0, 1]), // from memory: the value before
      mbap(2, 1, [6, 0, 3, 0x10, 0x92]), // 4242
      mbap(3, 1, [3, 0, 3, 0, 1]),
    ]);
    expect(answers.map((a) => a.readUInt16BE(0))).toEqual([1, 2, 3]);
    expect([...answers[0]!.subarray(7)]).toEqual([3, 2, truth(1, 3) >> 8, truth(1, 3) & 0xff]);
    expect([...answers[1]!.subarray(7)]).toEqual([6, 0, 3, 0x10, 0x92]);
    expect([...answers[2]!.subarray(7)]).toEqual([3, 2, 0x10, 0x92]);
  });
});
