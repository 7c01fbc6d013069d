// Hostile clients against a bus share while the line is polled: garbage, truncated and oversized
// frames, foreign protocol ids, more connections than allowed, a client that never reads, a flood
// of writes. Each is answered or closed; the polls keep running.
import { afterEach, describe, expect, it } from 'vitest';
import { startPymodbus } from '../../helpers/pymodbus.js';
import { mbap, pymodbusRequests, rawClient } from '../../helpers/share-clients.js';
import { waitFor } from '../../helpers/wait.js';
import { startShareRig, type ShareRig } from './share-rig.js';
import { splitAnswers } from './share-traffic.js';
import { connect, createServer, type Socket } from 'node:net';

const rigs: ShareRig[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const rig of rigs.splice(0)) await rig.stop();
});

async function rig(share: Record<string, unknown>): Promise<ShareRig> {
  const started = await startShareRig({ share, pollEveryMs: 20 }, async (path) => {
    const slave = await startPymodbus({ serial: path }, { units: [1, 2] });
    return () => slave.stop();
  });
  rigs.push(started);
  await waitFor(() => started.polls.ok >= 4, { what: 'polls running' });
  return started;
}

async function pollsGoOn(r: ShareRig): Promise<void> {
  const before = r.polls.ok;
  await waitFor(() => r.polls.ok >= before + 4, { what: 'polls after the attack', timeoutMs: 20_000 });
}

describe('hostile share clients', () => {
  it.each([
    ['garbage', Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n')],
    ['a length field of 65535', Buffer.concat([Buffer.from([0, 1, 0, 0, 0xff, 0xff, 1]), Buffer.alloc(64)])],
    ['a length field of 0', Buffer.from([0, 1, 0, 0, 0, 0, 1, 3])],
    ['a foreign protocol id', mbap(1, 1, [3, 0, 0, 0, 1], 7)],
  ])('closes the connection on %s', async (_name, bytes) => {
    const r = await rig({});
    const client = await rawClient(r.port);
    client.socket.write(bytes);
    await client.closed;
    expect(client.received().length).toBe(0);
    expect(r.log.count('share client closed')).toBe(1);
    await pollsGoOn(r);
  });

  it('answers every frame of a stream cut into single bytes, and unit ids 0..255 each with a reply or an exception', async () => {
    const r = await rig({ ratePerSecond: 1000 });
    const client = await rawClient(r.port);
    const frames = Array.from({ length: 256 }, (_, unit) => mbap(unit, unit, [3, 0, 0, 0, 2]));
    for (const byte of Buffer.concat(frames.slice(0, 3))) client.socket.write(Buffer.from([byte]));
    for (const frame of frames.slice(3)) client.socket.write(frame);
    // 2 units answer 13 bytes (two registers), the other 254 an exception of 9 bytes.
    await waitFor(() => client.received().length >= 2 * 13 + 254 * 9, { what: 'all answers', timeoutMs: 30_000 });
    const answers = splitAnswers(client.received());
    expect(answers).toHaveLength(256);
    for (const answer of answers) {
      const unit = answer[6] as number;
      if (unit === 1 || unit === 2) expect(answer.subarray(7)).toEqual(Buffer.from([3, 4, unit * 1000 >> 8, (unit * 1000) & 0xff, (unit * 1000 + 1) >> 8, (unit * 1000 + 1) & 0xff]));
      else expect([...answer.subarray(7)]).toEqual([0x83, 0x0a]);
    }
    client.socket.end();
  });

  it('a truncated frame is simply waited for; the client leaving frees its place', async () => {
    const r = await rig({ maxClients: 1 });
    const first = await rawClient(r.port);
    first.socket.write(mbap(1, 1, [3, 0, 0, 0, 1]).subarray(0, 9));
    await waitFor(() => r.shares.status()[0]?.clients === 1, { what: 'client counted' });
    first.socket.destroy();
    await waitFor(() => r.shares.status()[0]?.clients === 0, { what: 'client gone' });
    expect(await pymodbusRequests(r.port, [{ fc: 3, unit: 1, address: 0, count: 1 }])).toEqual([{ registers: [1000] }]);
  });

  it('closes connections beyond maxClients at once, logged once, and serves the ones it holds', async () => {
    const r = await rig({ maxClients: 4 });
    const opened = await Promise.all(Array.from({ length: 1000 }, () => rawClient(r.port)));
    for (const c of opened) sockets.push(c.socket);
    let closed = 0;
    for (const c of opened) void c.closed.then(() => { closed += 1; });
    await waitFor(() => closed === 996, { what: '996 closed', timeoutMs: 20_000 });
    expect(r.shares.status()[0]).toMatchObject({ clients: 4, refusedConnections: 996 });
    expect(r.log.count('share full: further clients are closed at once')).toBe(1);
    const held = opened.filter((c) => !c.socket.destroyed && c.socket.readyState === 'open');
    held[0]!.socket.write(mbap(9, 1, [3, 0, 1, 0, 1]));
    await waitFor(() => held[0]!.received().length >= 11, { what: 'answer to a held client' });
    // A place freed: the next client is served, and the end of the refusals is logged once.
    held[1]!.socket.destroy();
    await waitFor(() => r.shares.status()[0]?.clients === 3, { what: 'a place freed' });
    expect(await pymodbusRequests(r.port, [{ fc: 3, unit: 2, address: 0, count: 1 }])).toEqual([{ registers: [2000] }]);
    expect(r.log.count('share accepts clients again')).toBe(1);
    await pollsGoOn(r);
  }, 60_000);

  it('a port already taken: the share shows failed with the reason, logged once, the bus polls on, and a reload tries again', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const started = await startShareRig({ share: {}, pollEveryMs: 20, sharePort: port }, async (path) => {
        const slave = await startPymodbus({ serial: path }, { units: [1, 2] });
        return () => slave.stop();
      });
      rigs.push(started);
      expect(started.shares.status()[0]).toMatchObject({ state: 'failed', error: expect.stringContaining('EADDRINUSE') });
      expect(started.log.count('share could not listen; the bus runs without it')).toBe(1);
      await pollsGoOn(started);
      // The port freed, a reload (even of the same site) tries again.
      await new Promise<void>((resolve) => taken.close(() => resolve()));
      await started.shares.apply(started.site);
      expect(started.shares.status()[0]).toMatchObject({ state: 'listening' });
      expect(await pymodbusRequests(port, [{ fc: 3, unit: 1, address: 0, count: 1 }])).toEqual([{ registers: [1000] }]);
    } finally {
      if (taken.listening) await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });

  it('closes a client idle past idleTimeoutMs, logged once with the reason', async () => {
    const r = await rig({ idleTimeoutMs: 300 });
    const client = await rawClient(r.port);
    client.socket.write(mbap(1, 1, [3, 0, 0, 0, 1]));
    await client.closed;
    expect(client.received().length).toBe(11);
    expect(r.log.lines().filter((l) => l.msg === 'share client closed')).toEqual([expect.objectContaining({ reason: 'idle', idleTimeoutMs: 300 })]);
  });

  it('closes a client that never reads its answers', async () => {
    const r = await rig({ cacheMs: 60_000, ratePerSecond: 10_000 });
    const socket = connect(r.port, '127.0.0.1');
    sockets.push(socket);
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.pause(); // never reads
    // A read of 0..124 through the share fills the cache; then such reads are answered from memory: 259 bytes back for 12 sent.
    expect((await pymodbusRequests(r.port, [{ fc: 3, unit: 1, address: 0, count: 125 }]))[0]).toHaveProperty('registers');
    const request = mbap(1, 1, [3, 0, 0, 0, 125]);
    const burst = Buffer.concat(Array.from({ length: 2000 }, () => request));
    for (let i = 0; i < 100 && r.shares.status()[0]?.clients !== 0; i += 1) {
      socket.write(burst);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await waitFor(() => r.shares.status()[0]?.clients === 0, { what: 'non-reading client closed', timeoutMs: 30_000 });
    expect(r.log.lines().some((l) => l.msg === 'share client closed' && l.reason === 'does not read its answers')).toBe(true);
    await pollsGoOn(r);
  }, 90_000);

  it('answers a flood of writes (forwarded or server busy), never silently; polls keep running', async () => {
    const r = await rig({ access: 'read-write', ratePerSecond: 50, queueDepth: 4 });
    const client = await rawClient(r.port);
    const count = 500;
    client.socket.write(Buffer.concat(Array.from({ length: count }, (_, i) => mbap(i, 2, [6, 0, 5, (i >> 8) & 0xff, i & 0xff]))));
    await waitFor(() => splitAnswers(client.received()).length === count, { what: 'every write answered', timeoutMs: 60_000 });
    const answers = splitAnswers(client.received());
    const echoed = answers.filter((a) => a[7] === 6).length;
    const busy = answers.filter((a) => a[7] === 0x86 && a[8] === 6).length;
    expect(echoed + busy).toBe(count);
    expect(echoed).toBeGreaterThan(0);
    expect(busy).toBeGreaterThan(0);
    expect(r.log.count('share write forwarded')).toBe(echoed);
    expect(r.log.count('share client over its rate or queue: answered server busy (further busy answers to it are only counted)')).toBe(1);
    await pollsGoOn(r);
    client.socket.end();
  });
});
