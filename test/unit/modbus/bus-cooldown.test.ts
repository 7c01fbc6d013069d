import { beforeEach, describe, expect, it } from 'vitest';
import type { BusConfig } from '../../../src/core/config/site-types.js';
import { Bus } from '../../../src/field/modbus/bus.js';
import { ModbusTimeoutError, UnitCoolingDownError } from '../../../src/field/modbus/errors.js';
import { rtuBusConfig, tcpBusConfig } from '../../helpers/bus-configs.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { FakeTransport } from '../../helpers/fake-transport.js';
import { ManualClock } from '../../helpers/manual-clock.js';

const T0 = 1_700_000_000_000;

// Manual time: the bus's timers and the fake line's latency run only when a test advances it.
let clock = new ManualClock(T0);
beforeEach(() => {
  clock = new ManualClock(T0);
});

interface Outcome { unit: number; issuedAt: number; settledAt: number; result: 'ok' | string }

/** Polls every unit once per second, like a poller would, and records every outcome. */
async function pollEverySecond(bus: Bus, units: number[], seconds: number, outcomes: Outcome[]) {
  for (let second = 0; second < seconds; second += 1) {
    for (const unit of units) {
      const issuedAt = clock.now();
      bus.read(unit, 'holding', 0, 2).then(
        () => outcomes.push({ unit, issuedAt, settledAt: clock.now(), result: 'ok' }),
        (err: Error) => outcomes.push({ unit, issuedAt, settledAt: clock.now(), result: err.name }),
      );
    }
    await clock.advanceAsync(1000);
  }
}

async function setup(config: BusConfig) {
  const transport = new FakeTransport(clock);
  const log = captureLogger();
  const bus = new Bus({ config, transportFactory: () => transport, clock, timers: clock, logger: log.logger });
  bus.start();
  await clock.advanceAsync(T0 % 1000 === 0 ? 1000 : 0); // open; start rounds on a whole second
  return { bus, transport, log, start: clock.now() };
}

describe('per-unit cool-down', () => {
  it('a dead unit costs at most one timeout per cool-down while the other unit keeps its period', async () => {
    const config = rtuBusConfig({ timeoutMs: 200, cooldown: { afterTimeouts: 2, initialMs: 5000, maxMs: 20000 } });
    const { bus, transport, log, start } = await setup(config);
    transport.behaviour = (unit) => (unit === 1 ? 'timeout' : 'ok');
    const outcomes: Outcome[] = [];

    await pollEverySecond(bus, [1, 2], 60, outcomes);

    // Unit 1 is on the wire twice (afterTimeouts), then once per cool-down: 5 s, 10 s, 20 s (capped).
    const deadCalls = transport.calls.filter((c) => c.unit === 1).map((c) => c.startedAt - start);
    expect(deadCalls).toEqual([0, 1000, 7000, 18000, 39000]);
    expect(bus.stats().timeouts).toBe(5);
    const unit1 = outcomes.filter((o) => o.unit === 1);
    expect(unit1.filter((o) => o.result === 'UnitCoolingDownError')).toHaveLength(55);
    // Fail fast: a refused request settles without waiting for the line.
    expect(unit1.filter((o) => o.result === 'UnitCoolingDownError').every((o) => o.settledAt - o.issuedAt < 250))
      .toBe(true);

    // Unit 2 answered every single round, each within its period.
    const unit2 = outcomes.filter((o) => o.unit === 2);
    expect(unit2).toHaveLength(60);
    expect(unit2.every((o) => o.result === 'ok' && o.settledAt - o.issuedAt < 1000)).toBe(true);

    expect(bus.unitState(1)).toMatchObject({ state: 'cooling-down', cooldownLevel: 3 });
    expect(bus.unitState(2)).toMatchObject({ state: 'ok', consecutiveTimeouts: 0 });
    expect(log.count('unit cooling down')).toBe(1);

    // The unit comes back: the next probe succeeds and the unit is served normally again.
    transport.behaviour = () => 'ok';
    await clock.advanceAsync(20_000);
    const after: Outcome[] = [];
    await pollEverySecond(bus, [1, 2], 3, after);
    expect(after.filter((o) => o.unit === 1).map((o) => o.result)).toEqual(['ok', 'ok', 'ok']);
    expect(bus.unitState(1).state).toBe('ok');
    expect(log.count('unit answering again')).toBe(1);
  });

  it('a single timeout below the threshold does not start a cool-down', async () => {
    const { bus, transport } = await setup(rtuBusConfig({ cooldown: { afterTimeouts: 3, initialMs: 5000, maxMs: 5000 } }));
    let left = 2;
    transport.behaviour = () => (left-- > 0 ? 'timeout' : 'ok');
    const outcomes: Outcome[] = [];
    await pollEverySecond(bus, [1], 4, outcomes);
    expect(outcomes.map((o) => o.result)).toEqual(['ModbusTimeoutError', 'ModbusTimeoutError', 'ok', 'ok']);
    expect(bus.unitState(1)).toMatchObject({ state: 'ok', consecutiveTimeouts: 0 });
  });

  it('treats a TCP gateway "target failed to respond" (exception 11) like a timeout', async () => {
    const { bus, transport } = await setup(tcpBusConfig({ cooldown: { afterTimeouts: 2, initialMs: 10_000, maxMs: 10_000 } }));
    transport.behaviour = (unit) => (unit === 7 ? { exception: 11 } : 'ok');
    const outcomes: Outcome[] = [];
    await pollEverySecond(bus, [7, 8], 5, outcomes);
    expect(outcomes.filter((o) => o.unit === 7).map((o) => o.result)).toEqual([
      'ModbusExceptionError', 'ModbusExceptionError', 'UnitCoolingDownError', 'UnitCoolingDownError',
      'UnitCoolingDownError',
    ]);
    expect(outcomes.filter((o) => o.unit === 8).every((o) => o.result === 'ok')).toBe(true);
  });

  it('the cool-down error says when the next probe is due', async () => {
    const { bus, transport } = await setup(rtuBusConfig({ cooldown: { afterTimeouts: 1, initialMs: 3000, maxMs: 3000 } }));
    transport.behaviour = () => 'timeout';
    const first = bus.read(1, 'holding', 0, 1).catch((err: unknown) => err);
    await clock.advanceAsync(1000);
    expect(await first).toBeInstanceOf(ModbusTimeoutError);
    const refused = await bus.read(1, 'holding', 0, 1).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(UnitCoolingDownError);
    expect((refused as Error).message).toMatch(/^unit 1 is cooling down after repeated timeouts \(no answer within \d+ ms\) \(next probe in 2\d{3} ms\)$/);
  });
});
