import { describe, expect, it } from 'vitest';
import { UnitHealthTracker } from '../../../src/field/modbus/cooldown.js';
import { RequestQueue } from '../../../src/field/modbus/request-queue.js';
import { mapLibraryError } from '../../../src/field/modbus/library-errors.js';
import {
  ModbusCrcError, ModbusEngineError, ModbusExceptionError, ModbusFrameError, ModbusTimeoutError, PortClosedError,
} from '../../../src/field/modbus/errors.js';

describe('RequestQueue', () => {
  it('serves high before normal, FIFO within each, and refuses beyond the limit', () => {
    const queue = new RequestQueue<string>(4);
    expect(queue.push('p1', 'normal')).toBe(true);
    expect(queue.push('p2', 'normal')).toBe(true);
    expect(queue.push('w1', 'high')).toBe(true);
    expect(queue.push('w2', 'high')).toBe(true);
    expect(queue.push('p3', 'normal')).toBe(false);
    expect([queue.shift(), queue.shift(), queue.shift(), queue.shift(), queue.shift()])
      .toEqual(['w1', 'w2', 'p1', 'p2', undefined]);
  });

  it('stays FIFO across internal compaction', () => {
    const queue = new RequestQueue<number>(1000);
    const out: number[] = [];
    for (let i = 0; i < 500; i += 1) {
      queue.push(i, 'normal');
      if (i % 3 === 0) out.push(queue.shift() as number);
    }
    out.push(...queue.drain());
    expect(out).toEqual(Array.from({ length: 500 }, (_, i) => i));
    expect(queue.size).toBe(0);
  });
});

describe('UnitHealthTracker', () => {
  const config = { afterTimeouts: 2, initialMs: 1000, maxMs: 4000 };

  it('cools down after N timeouts, allows one probe per period, doubles up to max while the bus answers, recovers', () => {
    const health = new UnitHealthTracker(config);
    expect(health.onNoAnswer(5, 0, false)).toBeUndefined();
    expect(health.onNoAnswer(5, 100, false)).toEqual({ kind: 'cooldown-started', delayMs: 1000, timeouts: 2, failures: 2, lastFailure: 'timeouts' });
    expect(health.onAnswer(6, 200)).toBeUndefined(); // a neighbour answers: the silence is unit 5's own
    expect(health.admit(5, 500)).toEqual({ kind: 'reject', retryInMs: 600 });
    expect(health.admit(6, 500)).toEqual({ kind: 'go' });
    expect(health.admit(5, 1100)).toEqual({ kind: 'probe' });
    expect(health.admit(5, 1100)).toEqual({ kind: 'reject', retryInMs: 0 }); // one probe at a time
    expect(health.onNoAnswer(5, 1300, true)).toEqual({ kind: 'cooldown-extended', delayMs: 2000, level: 1 });
    expect(health.admit(5, 3300)).toEqual({ kind: 'probe' });
    expect(health.onNoAnswer(5, 3400, true)).toEqual({ kind: 'cooldown-extended', delayMs: 4000, level: 2 });
    expect(health.admit(5, 7400)).toEqual({ kind: 'probe' });
    expect(health.onNoAnswer(5, 7400, true)).toEqual({ kind: 'cooldown-extended', delayMs: 4000, level: 3 });
    expect(health.coolingDownCount()).toBe(1);
    expect(health.admit(5, 11_400)).toEqual({ kind: 'probe' });
    expect(health.onAnswer(5, 11_450)).toEqual({ kind: 'recovered', cooledForMs: 11_350 });
    expect(health.view(5)).toEqual({ unit: 5, state: 'ok', consecutiveTimeouts: 0, cooldownLevel: 0 });
  });

  it('"busy" to every repeat is a failure but no timeout in a row: the unit answered', () => {
    const health = new UnitHealthTracker(config);
    expect(health.onNoAnswer(5, 0, false)).toBeUndefined();
    expect(health.view(5).consecutiveTimeouts).toBe(1);
    expect(health.onNoAnswer(5, 100, false, '"busy" answers', true)).toMatchObject({ kind: 'cooldown-started', timeouts: 0, failures: 2 });
    expect(health.view(5).consecutiveTimeouts).toBe(0);
  });

  it('while no unit of the bus answers, probes do not back off; the first unit back brings the others back', () => {
    const health = new UnitHealthTracker(config);
    health.onAnswer(1, 0);
    health.onAnswer(2, 0);
    // The peer stops answering: both units cool down, and their failed probes keep the first period.
    for (const unit of [1, 2]) {
      health.onNoAnswer(unit, 100, false);
      health.onNoAnswer(unit, 200, false);
    }
    expect(health.admit(1, 1200)).toEqual({ kind: 'probe' });
    expect(health.onNoAnswer(1, 1200, true)).toEqual({ kind: 'cooldown-extended', delayMs: 1000, level: 0 });
    expect(health.admit(2, 1200)).toEqual({ kind: 'probe' });
    expect(health.onNoAnswer(2, 1300, true)).toEqual({ kind: 'cooldown-extended', delayMs: 1000, level: 0 });
    // The peer is back: unit 1's probe answers, unit 2 is probed at its next request, not at 2300.
    expect(health.admit(1, 2200)).toEqual({ kind: 'probe' });
    expect(health.onAnswer(1, 2210)).toEqual({ kind: 'recovered', cooledForMs: 2010 });
    expect(health.admit(2, 2220)).toEqual({ kind: 'probe' });
  });

  it('a unit that was dead before the bus went silent keeps its own, growing period', () => {
    const health = new UnitHealthTracker(config);
    health.onNoAnswer(5, 0, false);
    health.onNoAnswer(5, 100, false); // unit 5 cools down at 100
    health.onAnswer(6, 200); // the bus answers after that: unit 5's silence is its own
    health.onNoAnswer(6, 300, false);
    health.onNoAnswer(6, 400, false); // then the bus goes silent too
    expect(health.admit(6, 1400)).toEqual({ kind: 'probe' });
    expect(health.onAnswer(6, 1400)).toEqual({ kind: 'recovered', cooledForMs: 1000 });
    expect(health.admit(5, 1400)).toEqual({ kind: 'probe' }); // its own period ran out at 1100
    expect(health.onNoAnswer(5, 1500, true)).toEqual({ kind: 'cooldown-extended', delayMs: 2000, level: 1 });
    health.onAnswer(6, 1600);
    expect(health.admit(5, 1600)).toEqual({ kind: 'reject', retryInMs: 1900 }); // not brought back by unit 6
  });

  it.each([
    ['timeouts in a row', ['timeout', 'timeout'], true],
    ['an answer between timeouts pays one back', ['timeout', 'answer', 'timeout'], false],
    ['a timeout and its late reply', ['timeout', 'late'], true],
    ['occasional timeouts among answers', ['timeout', 'answer', 'answer', 'timeout', 'answer', 'timeout'], false],
  ] as const)('failures not paid back by answers start a cool-down: %s', (_name, events, coolsDown) => {
    const health = new UnitHealthTracker(config);
    events.forEach((event, i) => {
      if (event === 'timeout') health.onNoAnswer(3, i, false);
      else if (event === 'late') health.onLate(3, i);
      else health.onAnswer(3, i);
    });
    expect(health.view(3).state).toBe(coolsDown ? 'cooling-down' : 'ok');
  });

  it('a probe ending inconclusively (port closed) frees the probe slot without extending', () => {
    const health = new UnitHealthTracker({ ...config, afterTimeouts: 1 });
    health.onNoAnswer(1, 0, false);
    expect(health.admit(1, 1000)).toEqual({ kind: 'probe' });
    health.onInconclusive(1, true);
    expect(health.admit(1, 1000)).toEqual({ kind: 'probe' });
  });

  it('a late timeout of a request admitted before the cool-down changes nothing', () => {
    const health = new UnitHealthTracker({ ...config, afterTimeouts: 1 });
    health.onNoAnswer(1, 0, false);
    expect(health.onNoAnswer(1, 10, false)).toBeUndefined();
    expect(health.view(1)).toMatchObject({ state: 'cooling-down', nextProbeAt: 1000, cooldownLevel: 0 });
  });
});

describe('mapLibraryError (modbus-serial error shapes)', () => {
  const cases: Array<[string, unknown, new (...args: never[]) => ModbusEngineError, string]> = [
    ['timeout', { name: 'TransactionTimedOutError', message: 'Timed out', errno: 'ETIMEDOUT' }, ModbusTimeoutError,
      'unit 3 did not answer within 500 ms'],
    ['exception', Object.assign(new Error('Modbus exception 2: Illegal data address'), { modbusCode: 2 }),
      ModbusExceptionError, 'unit 3 answered with Modbus exception 2 (Illegal data address)'],
    ['crc', new Error('CRC error'), ModbusCrcError, 'unit 3: malformed reply: CRC error'],
    ['length', new Error('Data length error, expected 9 got 7'), ModbusFrameError,
      'unit 3: malformed reply: Data length error, expected 9 got 7'],
    ['not open', { name: 'PortNotOpenError', message: 'Port Not Open', errno: 'ECONNREFUSED' }, PortClosedError,
      'port closed: port not open'],
    ['other', new Error('EPIPE'), ModbusEngineError, 'unit 3: EPIPE'],
  ];
  it.each(cases)('%s', (_name, raw, type, message) => {
    const mapped = mapLibraryError(raw, 3, 500);
    expect(mapped).toBeInstanceOf(type);
    expect(mapped.message).toBe(message);
  });
});
