// ShareService with a fake bus and a manual clock: client rate and queue bounds (server busy),
// the share class and its queue-wait figures, line failures mapped to the gateway exceptions,
// cache answers, and the read-back hook after a forwarded write.
import { describe, expect, it } from 'vitest';
import type { ShareConfig } from '../../../src/core/config/share.js';
import { SHARE_DEFAULTS } from '../../../src/core/config/share.js';
import { EXCEPTION } from '../../../src/core/modbus/mbap-request.js';
import { ReadCache } from '../../../src/core/modbus/read-cache.js';
import type { BroadcastWrite } from '../../../src/core/modbus/broadcast-frame.js';
import { sharePolicy } from '../../../src/core/modbus/share-policy.js';
import { QueueFullError } from '../../../src/core/queue-full-error.js';
import { exceptionFor, ShareService, type ShareBus } from '../../../src/share/share-service.js';
import type { RequestOptions } from '../../../src/field/modbus/bus-request.js';
import {
  BusDownError, LineEchoError, ModbusCrcError, ModbusExceptionError, ModbusTimeoutError, RequestCancelledError, UnitCoolingDownError, UnitLateReplyPendingError,
} from '../../../src/field/modbus/errors.js';
import { silentLogger } from '../../../src/ops/log.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { ManualClock } from '../../helpers/manual-clock.js';

const T0 = 1_700_000_000_000;
const client = { id: 1, remote: '127.0.0.1:40000' };
const frame = (unit: number, pdu: number[]) => ({ transactionId: 1, protocolId: 0, unit, pdu: Buffer.from(pdu) });

interface Call { unit: number; options: RequestOptions | undefined; resolve: () => void; reject: (err: unknown) => void; broadcast?: { write: BroadcastWrite; turnaroundMs: number } }

function fakeBus(): ShareBus & { calls: Call[] } {
  const calls: Call[] = [];
  const pending = <T>(unit: number, options: RequestOptions | undefined, value: T, broadcast?: Call['broadcast']) => new Promise<T>((resolve, reject) => {
    calls.push({ unit, options, resolve: () => resolve(value), reject, ...(broadcast ? { broadcast } : {}) });
  });
  return {
    calls,
    read: (unit, table, start, count, options) => pending(unit, options, { table, start, words: Uint16Array.from({ length: count }, (_, i) => start + i) }),
    writeRegisters: (unit, _a, _v, options) => pending(unit, options, undefined),
    writeCoils: (unit, _a, _v, options) => pending(unit, options, undefined),
    broadcast: (write, turnaroundMs, options) => pending(0, options, undefined, { write, turnaroundMs }),
  };
}

function service(overrides: Partial<ShareConfig> = {}, extra: { cache?: ReadCache; written?: (...args: unknown[]) => void } = {}) {
  const clock = new ManualClock(T0);
  const bus = fakeBus();
  const config: ShareConfig = { ...SHARE_DEFAULTS, port: 1502, ...overrides };
  const answers: Buffer[] = [];
  const s = new ShareService({ bus, config, policy: sharePolicy(config, [1]), clock, log: silentLogger(), ...extra });
  const ask = (unit: number, pdu: number[]) => s.request(client, frame(unit, pdu), (answer) => answers.push(answer));
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return { s, bus, clock, answers, ask, settle };
}

describe('ShareService', () => {
  it('forwards as the share class, records the queue wait from the moment the line takes it', async () => {
    const { s, bus, clock, answers, ask, settle } = service({ timeoutMs: 250 });
    ask(1, [3, 0, 4, 0, 2]);
    expect(bus.calls[0]?.options).toMatchObject({ priority: 'share', timeoutMs: 250 });
    clock.advance(40);
    bus.calls[0]!.options!.onStart!();
    bus.calls[0]!.options!.onStart!(); // a repeat after "busy" is not a second wait
    bus.calls[0]!.resolve();
    await settle();
    expect(answers.map((a) => a.toString('hex'))).toEqual(['030400040005']);
    expect(s.queueWait()).toEqual({ p50: 40, p99: 40 });
    expect(s.counters).toMatchObject({ requests: 1, forwarded: 1, failed: 0 });
  });

  it('answers server busy beyond the client\'s queue depth, and over its rate', async () => {
    const { s, bus, clock, answers, ask } = service({ queueDepth: 2, ratePerSecond: 5 });
    for (let i = 0; i < 3; i += 1) ask(1, [3, 0, 0, 0, 1]);
    expect(bus.calls).toHaveLength(2);
    expect(answers.map((a) => a.toString('hex'))).toEqual(['8306']);
    for (const call of bus.calls) call.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    for (let i = 0; i < 3; i += 1) ask(1, [3, 0, 0, 0, 1]);
    // 5 tokens: 3 spent above, 2 left; the third is over the rate.
    expect(answers.slice(-1).map((a) => a.toString('hex'))).toEqual(['8306']);
    for (const call of bus.calls.slice(2)) call.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    clock.advance(1000);
    ask(1, [3, 0, 0, 0, 1]);
    expect(s.counters.busy).toBe(2);
    expect(bus.calls).toHaveLength(5);
  });

  it.each([
    ['a timeout', new ModbusTimeoutError(1, 300), EXCEPTION.gatewayTargetNoResponse],
    ['a cooling unit', new UnitCoolingDownError(1, 1000), EXCEPTION.gatewayPathUnavailable],
    ['a late-reply guard', new UnitLateReplyPendingError(1, 500, false), EXCEPTION.gatewayPathUnavailable],
    ['a bus down', new BusDownError('line', 'ENOENT'), EXCEPTION.gatewayPathUnavailable],
    ['a full bus queue', new QueueFullError('bus line', 1000), EXCEPTION.serverBusy],
    ['the device\'s own exception', new ModbusExceptionError(1, 2), 2],
    ['a bad CRC', new ModbusCrcError(1), EXCEPTION.gatewayTargetNoResponse],
    ['a missing echo', new LineEchoError(1, 'missing'), EXCEPTION.gatewayTargetNoResponse],
  ])('answers %s with the matching exception', async (_name, err, code) => {
    expect(exceptionFor(err)).toBe(code);
    const { s, bus, answers, ask, settle } = service();
    ask(1, [4, 0, 0, 0, 1]);
    bus.calls[0]!.reject(err);
    await settle();
    expect([...answers[0]!]).toEqual([0x84, code]);
    expect(s.counters.failed).toBe(1);
  });

  it('answers from the cache within cacheMs, forwards after it', () => {
    const cache = new ReadCache();
    const { s, bus, clock, answers, ask } = service({ cacheMs: 1000 }, { cache });
    cache.record({ unit: 1, table: 'holding', start: 0, words: Uint16Array.of(7, 8, 9), at: T0 });
    ask(1, [3, 0, 1, 0, 2]);
    expect(answers.map((a) => a.toString('hex'))).toEqual(['030400080009']);
    expect(bus.calls).toHaveLength(0);
    clock.advance(1000);
    ask(1, [3, 0, 1, 0, 2]);
    expect(bus.calls).toHaveLength(1);
    expect(s.counters).toMatchObject({ fromCache: 1, forwarded: 1 });
  });

  it('hands a successful write to the read-back hook, with FC16 kept multi', async () => {
    const written: unknown[][] = [];
    const { bus, answers, ask, settle } = service({ access: 'read-write' }, { written: (...args) => written.push(args) });
    ask(1, [16, 0, 10, 0, 2, 4, 0, 1, 0, 2]);
    expect(bus.calls[0]?.options).toMatchObject({ priority: 'share', forceMulti: true });
    bus.calls[0]!.resolve();
    await settle();
    expect(written).toEqual([[1, 'holding', 10, 11]]);
    expect(answers.map((a) => a.toString('hex'))).toEqual(['10000a0002']);
  });

  describe('unit 0', () => {
    it('is path unavailable without allowBroadcast, and nothing reaches the bus', () => {
      const { s, bus, answers, ask } = service({ access: 'read-write' });
      ask(0, [6, 0, 7, 0, 1]);
      ask(0, [3, 0, 0, 0, 1]);
      expect(answers.map((a) => a.toString('hex'))).toEqual(['860a', '830a']);
      expect(bus.calls).toHaveLength(0);
      expect(s.counters.refusedByPolicy).toBe(2);
    });

    it('sends a write as a broadcast with the turnaround, answers the write echo once sent, reads back every unit', async () => {
      const written: unknown[][] = [];
      const { s, bus, answers, ask, settle } = service({ access: 'read-write', allowBroadcast: true, broadcastTurnaroundMs: 150 }, { written: (...args) => written.push(args) });
      ask(0, [6, 0, 7, 0x12, 0x34]);
      ask(0, [15, 0, 3, 0, 3, 1, 0b101]);
      expect(bus.calls.map((c) => c.broadcast)).toEqual([
        { write: { kind: 'write-registers', address: 7, values: [0x1234], forceMulti: false }, turnaroundMs: 150 },
        { write: { kind: 'write-coils', address: 3, values: [true, false, true], forceMulti: true }, turnaroundMs: 150 },
      ]);
      expect(bus.calls[0]?.options).toMatchObject({ priority: 'share' });
      expect(answers).toHaveLength(0); // not before the bus has sent it
      for (const call of bus.calls) call.resolve();
      await settle();
      expect(answers.map((a) => a.toString('hex'))).toEqual(['0600071234', '0f00030003']);
      expect(written).toEqual([[0, 'holding', 7, 7], [0, 'coil', 3, 5]]);
      expect(s.counters).toMatchObject({ forwarded: 2, failed: 0 });
    });

    it('refuses a read as an illegal function, and answers a broadcast the bus could not send with its failure', async () => {
      const { s, bus, answers, ask, settle } = service({ access: 'read-write', allowBroadcast: true });
      ask(0, [4, 0, 0, 0, 1]);
      expect(answers.map((a) => a.toString('hex'))).toEqual(['8401']);
      ask(0, [6, 0, 1, 0, 1]);
      bus.calls[0]!.reject(new BusDownError('l', 'serial port closed'));
      await settle();
      expect(answers.map((a) => a.toString('hex'))).toEqual(['8401', '860a']);
      expect(s.counters).toMatchObject({ refusedByPolicy: 1, failed: 1 });
    });
  });
});

describe('ShareService: the share\'s requests in the bus', () => {
  function shared(overrides: Partial<ShareConfig> = {}, cache?: ReadCache) {
    const clock = new ManualClock(T0);
    const bus = fakeBus();
    const log = captureLogger();
    const config: ShareConfig = { ...SHARE_DEFAULTS, port: 1502, ...overrides };
    const s = new ShareService({ bus, config, policy: sharePolicy(config, [1]), clock, log: log.logger, ...(cache ? { cache } : {}) });
    const answers: Array<[number, string]> = [];
    const ask = (id: number, pdu: number[]) => s.request({ id, remote: `127.0.0.1:${40000 + id}` }, frame(1, pdu), (a) => answers.push([id, a.toString('hex')]));
    return { s, bus, log, answers, ask, settle: () => new Promise((resolve) => setImmediate(resolve)) };
  }

  it('holds at most maxQueued of all clients together; beyond it server busy at once, logged once per spell', async () => {
    const { s, bus, log, answers, ask, settle } = shared({ maxQueued: 3, queueDepth: 2 });
    ask(1, [3, 0, 0, 0, 1]);
    ask(1, [3, 0, 1, 0, 1]);
    ask(2, [3, 0, 2, 0, 1]);
    ask(2, [3, 0, 3, 0, 1]);
    ask(3, [3, 0, 4, 0, 1]);
    expect(bus.calls).toHaveLength(3);
    expect(answers).toEqual([[2, '8306'], [3, '8306']]);
    expect(s.queued).toBe(3);
    bus.calls[0]!.resolve();
    await settle();
    ask(3, [3, 0, 5, 0, 1]);
    expect(bus.calls).toHaveLength(4);
    for (const call of bus.calls.slice(1)) call.resolve();
    await settle();
    expect(s.queued).toBe(0);
    expect(s.counters).toMatchObject({ busy: 2, forwarded: 4 });
    expect(log.count('share requests at their cap in the bus queue: further ones answered server busy')).toBe(1);
    expect(log.count('share requests below their cap again')).toBe(1);
  });

  it('a client that leaves cancels what it has in the bus, and nothing of it stays', async () => {
    const { s, bus, settle } = shared();
    for (let i = 0; i < 3; i += 1) s.request({ id: 7, remote: 'x' }, frame(1, [3, 0, i, 0, 1]), () => undefined);
    const signals = bus.calls.map((c) => c.options?.signal);
    expect(signals.every((signal) => signal?.aborted === false)).toBe(true);
    expect(s.trackedClients).toBe(1);
    s.closed({ id: 7, remote: 'x' });
    expect(signals.every((signal) => signal?.aborted === true)).toBe(true);
    expect(s.trackedClients).toBe(0);
    for (const call of bus.calls) call.reject(new RequestCancelledError(1));
    await settle();
    expect(s.counters).toMatchObject({ cancelled: 3, failed: 0 });
    expect(s.queued).toBe(0);
  });

  it('a read that memory could answer waits for the client\'s earlier requests, and looks only then', async () => {
    const cache = new ReadCache();
    cache.record({ unit: 1, table: 'holding', start: 0, words: Uint16Array.of(7, 8, 9), at: T0 });
    const { bus, answers, ask, settle } = shared({ cacheMs: 60_000, access: 'read-write' }, cache);
    ask(1, [6, 0, 1, 0, 5]); // a write of register 1
    ask(1, [3, 0, 0, 0, 2]); // registers 0..1: in memory, but the write may change it
    ask(2, [3, 0, 0, 0, 1]); // another client: nothing of its own before it
    expect(answers).toEqual([[2, '03020007']]);
    expect(bus.calls).toHaveLength(1);
    cache.forget(1, 'holding', 1, 1); // what share/share-cache.ts does once the write finished
    bus.calls[0]!.resolve();
    await settle();
    expect(bus.calls).toHaveLength(2); // memory forgot it: the read goes to the device
    bus.calls[1]!.resolve();
    await settle();
    expect(answers).toEqual([[2, '03020007'], [1, '0600010005'], [1, '030400000001']]);
  });
});
