import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../../src/ops/log.js';
import { decodeRtuFrame, encodeRtuFrame } from '../../../src/core/modbus/rtu-frame.js';
import { parseSimMap } from '../../../packages/simulator/src/map-file.js';
import { RtuSession, type ReplyScheduler } from '../../../packages/simulator/src/rtu-session.js';
import { Simulator } from '../../../packages/simulator/src/simulator.js';
import { lineTiming } from '../../../packages/simulator/src/timing.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

class RecordingScheduler implements ReplyScheduler {
  jobs: Array<{ atMicros: number; run: () => void }> = [];
  get pending() { return this.jobs.length; }
  push(atMicros: number, run: () => void) { this.jobs.push({ atMicros, run }); }
  runAll() { for (const job of this.jobs.splice(0)) job.run(); }
  close() { this.jobs = []; }
}

function setup(options: { baudAccurate?: boolean; baud?: number; strict?: boolean; echo?: boolean } = {}) {
  const parsed = parseSimMap('units: { 1: { holding: { 0: 7 } }, 2: { holding: { 0: 8 } } }');
  if (!parsed.ok) throw new Error(parsed.problems.join());
  const simulator = new Simulator(parsed.map, { logger: silentLogger() });
  const clock = { now: 1_000_000 };
  const written: Buffer[] = [];
  const scheduler = new RecordingScheduler();
  const timing = lineTiming({ baud: options.baud ?? 9600, parity: 'even', dataBits: 8, stopBits: 1 });
  const session = new RtuSession({
    simulator, logger: silentLogger(), write: (b) => written.push(b), timing,
    baudAccurate: options.baudAccurate, clock: () => clock.now, scheduler, strict: options.strict, echo: options.echo,
  });
  return { simulator, clock, written, scheduler, session, timing };
}

const readUnit1 = encodeRtuFrame(1, hex('03 0000 0001'));

describe('RtuSession', () => {
  beforeEach(() => { vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }); });
  afterEach(() => { vi.useRealTimers(); });

  it('answers at once when not baud-accurate', () => {
    const { written, session } = setup();
    session.feed(readUnit1);
    expect(written.map((b) => b.toString('hex'))).toEqual([encodeRtuFrame(1, hex('03 02 0007')).toString('hex')]);
  });

  it('multi-drop: answers only its own units, ignores bad CRC', () => {
    const { written, session, simulator } = setup();
    const bad = Buffer.from(readUnit1);
    bad[6] ^= 0xff;
    session.feed(Buffer.concat([bad, encodeRtuFrame(5, hex('03 0000 0001')), encodeRtuFrame(2, hex('03 0000 0001'))]));
    expect(written.map((b) => decodeRtuFrame(b))).toEqual([{ ok: true, unit: 2, pdu: hex('03 02 0008') }]);
    expect(simulator.line).toEqual({ badCrc: 1, foreignUnit: 1, earlyRequests: 0 });
  });

  it('garbled replies fail their CRC', () => {
    const { written, session, simulator } = setup();
    simulator.setFault(1, { garble: true });
    session.feed(readUnit1);
    expect(decodeRtuFrame(written[0])).toEqual({ ok: false, reason: 'bad-crc' });
  });

  it('answers an unknown function with exception 1 after line silence', () => {
    const { written, session } = setup();
    session.feed(encodeRtuFrame(1, hex('2B 0E 01 00')));
    expect(written).toEqual([]);
    vi.advanceTimersByTime(25);
    expect(written.map((b) => decodeRtuFrame(b))).toEqual([{ ok: true, unit: 1, pdu: hex('AB 01') }]);
  });

  it('delays a slow unit through the scheduler', () => {
    const { written, session, simulator, scheduler, clock } = setup();
    simulator.setFault(1, { slowMs: 50 });
    session.feed(readUnit1);
    expect(written).toEqual([]);
    expect(scheduler.jobs.map((j) => j.atMicros)).toEqual([clock.now + 50_000]);
    scheduler.runAll();
    expect(written).toHaveLength(1);
  });

  it('baud-accurate: reply waits for request + t3.5 + reply wire time', () => {
    const { session, scheduler, clock, timing } = setup({ baudAccurate: true });
    const start = clock.now;
    session.feed(readUnit1);
    expect(scheduler.jobs[0].atMicros).toBeCloseTo(start + timing.replyDoneMicros(8, 7), 6);
  });

  it('baud-accurate: back-to-back requests are paced at the line rate', () => {
    const { session, scheduler, clock, timing } = setup({ baudAccurate: true, baud: 115200 });
    const start = clock.now;
    session.feed(readUnit1);
    session.feed(readUnit1); // pipelined at the same instant
    clock.now += 1; // a third one slightly later
    session.feed(readUnit1);
    const cycle = timing.transactionMicros(8, 7);
    const times = scheduler.jobs.map((j) => j.atMicros - start);
    expect(times[0]).toBeCloseTo(timing.replyDoneMicros(8, 7), 6);
    expect(times[1]).toBeCloseTo(cycle + timing.replyDoneMicros(8, 7), 6);
    expect(times[2]).toBeCloseTo(2 * cycle + timing.replyDoneMicros(8, 7), 6);
  });

  it('baud-accurate: an unanswered request still holds the line', () => {
    const { session, scheduler, clock, timing, simulator } = setup({ baudAccurate: true });
    simulator.setFault(2, { timeout: true });
    const start = clock.now;
    session.feed(encodeRtuFrame(2, hex('03 0000 0001')));
    session.feed(readUnit1);
    const busy = timing.frameMicros(8) + timing.t35Micros;
    expect(scheduler.jobs[0].atMicros - start).toBeCloseTo(busy + timing.replyDoneMicros(8, 7), 6);
  });

  it('strict: a request beginning less than t3.5 after the reply is ignored and counted; one after t3.5 is answered', () => {
    const { session, scheduler, clock, timing, simulator } = setup({ baudAccurate: true, baud: 115200, strict: true });
    session.feed(readUnit1);
    const replyAt = scheduler.jobs[0]?.atMicros ?? 0;
    clock.now = replyAt + timing.t35Micros - 1; // 1 µs too early
    session.feed(readUnit1);
    expect(simulator.line.earlyRequests).toBe(1);
    expect(scheduler.jobs).toHaveLength(1);
    clock.now += timing.frameMicros(8) + timing.t35Micros + 1; // the ignored request held the line too
    session.feed(readUnit1);
    expect(simulator.line.earlyRequests).toBe(1);
    expect(scheduler.jobs).toHaveLength(2);
  });

  it('not strict: an early request is counted but still answered', () => {
    const { session, scheduler, clock, timing, simulator } = setup({ baudAccurate: true, baud: 115200 });
    session.feed(readUnit1);
    clock.now = (scheduler.jobs[0]?.atMicros ?? 0) + timing.t35Micros / 2;
    session.feed(readUnit1);
    expect(simulator.line.earlyRequests).toBe(1);
    expect(scheduler.jobs).toHaveLength(2);
  });

  it('echo: every request byte goes back before the reply', () => {
    const { session, written } = setup({ echo: true });
    session.feed(readUnit1.subarray(0, 3));
    session.feed(readUnit1.subarray(3));
    expect(Buffer.concat(written.slice(0, 2))).toEqual(readUnit1);
    expect(decodeRtuFrame(written[2] as Buffer)).toMatchObject({ ok: true, unit: 1 });
  });

  it.each([
    [{ baudAccurate: true }, 'baud-accurate mode needs line timing'],
    [{ strict: true }, 'strict timing needs baud-accurate mode'],
  ])('refuses %o: %s', (options, message) => {
    const parsed = parseSimMap('units: { 1: {} }');
    if (!parsed.ok) throw new Error('map');
    const simulator = new Simulator(parsed.map, { logger: silentLogger() });
    expect(() => new RtuSession({ simulator, logger: silentLogger(), write: () => {}, ...options })).toThrow(message);
  });
});
