// The RTU line port's awaited late replies expire with their guard (issue 39), on the port's
// injected clock: a ManualClock here, the port on a real socket to a TCP serial server stand-in on
// 127.0.0.1. Within the guard a frame of the timed-out request's unit and shape is its late reply;
// once the guard has passed the entry is gone and the same frame is a stray (the transport counts
// it as a discard), never a late reply.
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { BusConfig } from '../../../src/core/config/site-types.js';
import { encodeRtuFrame } from '../../../src/core/modbus/rtu-frame.js';
import { RtuLinePort } from '../../../src/field/modbus/rtu-line-port.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { waitFor } from '../../helpers/wait.js';

const GUARD_MS = 10_000;
const ASKED = { unit: 1, functionCode: 3, quantity: 2, address: 0 };
/** The late reply of that read (2 registers), and its exception form. */
const LATE_REPLY = encodeRtuFrame(1, Buffer.from([3, 4, 0xba, 0xd0, 0xba, 0xd0]));
const LATE_EXCEPTION = encodeRtuFrame(1, Buffer.from([0x83, 6]));
const REQUEST = encodeRtuFrame(1, Buffer.from([3, 0, 0, 0, 2]));

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Rig {
  port: RtuLinePort;
  clock: ManualClock;
  late: Array<{ unit: number; afterMs: number }>;
  /** The serial server's end: what it writes reaches the port. */
  peer: Socket;
}

async function rig(): Promise<Rig> {
  const server: Server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  const config: BusConfig = {
    kind: 'rtu-over-tcp', name: 'line', host: '127.0.0.1', port: address.port, interFrameDelayMs: 2, timeoutMs: 1000,
    reconnect: { initialMs: 100, maxMs: 1000, jitter: 0 }, cooldown: { afterTimeouts: 2, initialMs: 5000, maxMs: 20000 }, busyRetries: 3,
  };
  const clock = new ManualClock();
  const late: Rig['late'] = [];
  const port = RtuLinePort.forBus(config, clock, (unit, afterMs) => late.push({ unit, afterMs }));
  const accepted = once(server, 'connection') as Promise<[Socket]>;
  await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
  const [peer] = await accepted;
  cleanups.push(() => { peer.destroy(); });
  cleanups.push(() => new Promise<void>((resolve) => port.close(() => resolve())));
  return { port, clock, late, peer };
}

/** The read goes out and times out: its late reply is awaited from now on. */
function timedOut({ port, clock }: Rig, watchMs = GUARD_MS): void {
  port.begin(ASKED);
  port.expect(ASKED);
  port.write(REQUEST);
  port.end();
  port.awaitLate({ ...ASKED, sentAt: clock.now() }, watchMs);
}

/** Bytes from the line, once the port has them (its last activity moved). */
async function arrive(r: Rig, bytes: Buffer): Promise<void> {
  const before = r.port.lastActivityMs;
  r.peer.write(bytes);
  await waitFor(() => r.port.lastActivityMs > before, { what: 'the bytes at the port' });
  await new Promise((resolve) => setImmediate(resolve));
}

describe('the RTU line port\'s awaited late replies', () => {
  it('within the guard: the frame is the late reply, reported and excused', async () => {
    const r = await rig();
    timedOut(r);
    r.clock.advance(GUARD_MS - 1);
    expect(r.port.awaitedLate.current()).toHaveLength(1);
    await arrive(r, LATE_REPLY);
    expect(r.late).toEqual([{ unit: 1, afterMs: GUARD_MS - 1 }]);
    expect(r.port.awaitedLate.current()).toHaveLength(0);
    expect(r.port.begin(ASKED)).toBe(0); // no stray: it was the late reply
  });

  it.each([['its reply', LATE_REPLY], ['an exception', LATE_EXCEPTION]] as const)('after the guard: the entry is gone, %s is a stray, no late reply', async (_name, frame) => {
    const r = await rig();
    timedOut(r);
    r.clock.advance(GUARD_MS);
    expect(r.port.awaitedLate.current()).toEqual([]);
    await arrive(r, frame);
    expect(r.late).toEqual([]);
    expect(r.port.begin(ASKED)).toBe(frame.length); // counted as stale bytes before the next request
  });

  it('the bus\'s longer (learned) guard is the deadline: watched as long, then gone', async () => {
    const r = await rig();
    timedOut(r);
    r.port.awaitedLate.watchFor(1, { functionCode: 3, quantity: 2 }, 6 * GUARD_MS);
    r.clock.advance(GUARD_MS);
    expect(r.port.awaitedLate.current()).toHaveLength(1);
    r.clock.advance(5 * GUARD_MS);
    expect(r.port.awaitedLate.current()).toEqual([]);
    await arrive(r, LATE_REPLY);
    expect(r.late).toEqual([]);
  });

  it.each([
    ['expired before the request went out', GUARD_MS, 0],
    ['expiring while the request is on the line', GUARD_MS - 1, 1],
  ] as const)('an exception after the guard (%s) to a request of the unit with another length is that request\'s own', async (_name, before, during) => {
    const r = await rig();
    timedOut(r);
    r.clock.advance(before);
    const whole = { unit: 1, functionCode: 3, quantity: 4, address: 0 };
    r.port.begin(whole);
    r.port.expect(whole);
    const frames: Buffer[] = [];
    r.port.on('data', (frame: Buffer) => frames.push(frame));
    r.port.write(encodeRtuFrame(1, Buffer.from([3, 0, 0, 0, 4])));
    r.clock.advance(during);
    await arrive(r, LATE_EXCEPTION);
    await waitFor(() => frames.length > 0, { what: 'the frame handed over' });
    expect(frames).toEqual([LATE_EXCEPTION]);
    expect(r.port.verdict()).toEqual({ echo: 'none', skipped: 0, extra: 0, lateBytes: 0 });
    expect(r.late).toEqual([]);
  });

  it('hostile: the same exception while the late reply is still awaited stays ambiguous and is reported late', async () => {
    const r = await rig();
    timedOut(r);
    r.clock.advance(GUARD_MS - 1);
    const whole = { unit: 1, functionCode: 3, quantity: 4, address: 0 };
    r.port.begin(whole);
    r.port.expect(whole);
    const frames: Buffer[] = [];
    r.port.on('data', (frame: Buffer) => frames.push(frame));
    r.port.write(encodeRtuFrame(1, Buffer.from([3, 0, 0, 0, 4])));
    await arrive(r, LATE_EXCEPTION);
    await waitFor(() => frames.length > 0, { what: 'the frame handed over' });
    expect(r.port.verdict().ambiguous).toMatch(/exception reply of unit 1/);
    expect(r.late).toEqual([{ unit: 1, afterMs: GUARD_MS - 1 }]);
  });
});
