// Cool-downs are visible in /status: per bus the count and each unit cooling down, with when its
// next probe may go, how many periods in a row and why; gone again once the unit answers.
import { describe, expect, it } from 'vitest';
import { Bus } from '../../../src/field/modbus/bus.js';
import { UnitHealthTracker } from '../../../src/field/modbus/cooldown.js';
import { busStatusOf } from '../../../src/ops/status-assembly.js';
import { rtuBusConfig } from '../../helpers/bus-configs.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { FakeTransport } from '../../helpers/fake-transport.js';
import { ManualClock } from '../../helpers/manual-clock.js';

const T0 = 1_700_000_000_000;

describe('UnitHealthTracker.coolingDown', () => {
  it('lists only the units cooling down, by unit id, with the time to their next probe, level and cause', () => {
    const tracker = new UnitHealthTracker({ afterTimeouts: 2, initialMs: 5000, maxMs: 20_000 });
    tracker.onNoAnswer(9, 0, false);
    tracker.onNoAnswer(9, 100, false);
    tracker.onLate(3, 200);
    tracker.onLate(3, 300, 'late replies');
    tracker.onNoAnswer(4, 300, false);
    expect(tracker.coolingDown(1000)).toEqual([
      { unit: 3, nextProbeInMs: 4300, cooldownLevel: 0, lastFailure: 'late replies' },
      { unit: 9, nextProbeInMs: 4100, cooldownLevel: 0, lastFailure: 'timeouts' },
    ]);
    // Unit 9's probe at 5100 gets no answer while unit 3 answered meanwhile: the period doubles.
    tracker.onAnswer(4, 5000);
    expect(tracker.admit(9, 5100)).toEqual({ kind: 'probe' });
    tracker.onNoAnswer(9, 5100, true);
    expect(tracker.coolingDown(5100).find((u) => u.unit === 9)).toEqual({ unit: 9, nextProbeInMs: 10_000, cooldownLevel: 1, lastFailure: 'timeouts' });
    // Past its time and not yet probed: due, never negative.
    expect(tracker.coolingDown(99_000).map((u) => u.nextProbeInMs)).toEqual([0, 0]);
  });
});

describe('cool-downs in /status', () => {
  it('a dead unit shows on its bus with its next probe, and leaves once it answers again', async () => {
    const clock = new ManualClock(T0);
    const transport = new FakeTransport(clock);
    const config = rtuBusConfig({ timeoutMs: 200, cooldown: { afterTimeouts: 2, initialMs: 5000, maxMs: 20_000 } });
    const bus = new Bus({ config, transportFactory: () => transport, clock, timers: clock, logger: captureLogger().logger });
    bus.start();
    await clock.advanceAsync(1000);
    transport.behaviour = (unit) => (unit === 7 ? 'timeout' : 'ok');
    const settle = (unit: number) => bus.read(unit, 'holding', 0, 1).catch(() => undefined);

    for (let i = 0; i < 2; i++) {
      void settle(7);
      void settle(1);
      await clock.advanceAsync(1000);
    }
    const down = busStatusOf(bus.stats(), 'rtu', 10_000);
    expect(down.unitsCoolingDown).toBe(1);
    expect(down.coolingDownUnits).toHaveLength(1);
    expect(down.coolingDownUnits?.[0]).toMatchObject({ unit: 7, cooldownLevel: 0, lastFailure: 'timeouts (no answer within 200 ms)' });
    expect(down.coolingDownUnits?.[0].nextProbeInMs).toBeGreaterThan(0);
    expect(down.coolingDownUnits?.[0].nextProbeInMs).toBeLessThanOrEqual(5000);

    transport.behaviour = () => 'ok';
    await clock.advanceAsync(5000);
    void settle(7);
    await clock.advanceAsync(1000);
    const back = busStatusOf(bus.stats(), 'rtu', 20_000);
    expect(back.unitsCoolingDown).toBe(0);
    expect(back.coolingDownUnits).toEqual([]);
    await bus.stop();
  });
});
