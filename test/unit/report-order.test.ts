// The poller and the reporter together: the reports of a device leave in the order of their
// times. A device coming online (at start, after an upgrade's restart, after an outage) gives two
// reports at once, `online: true` and the values of the cycle that answered; both carry that
// cycle's start, never the online report a cycle's read time later than the values after it.
import { beforeEach, describe, expect, it } from 'vitest';
import type { ReadBlock } from '../../src/core/points/codec.js';
import { compileDevice } from '../../src/core/config/compile.js';
import { sleep } from '../../src/core/time.js';
import { Poller, type PollBus } from '../../src/device/poller.js';
import { Reporter } from '../../src/device/reporter.js';
import { ModbusTimeoutError } from '../../src/field/modbus/errors.js';
import { silentLogger } from '../../src/ops/log.js';
import { deviceConfig, pointConfig } from '../helpers/device-configs.js';
import { FakeOutbox } from '../helpers/fake-outbox.js';
import { ManualClock } from '../helpers/manual-clock.js';

const T0 = 1_700_000_000_000;
let clock = new ManualClock(T0);
beforeEach(() => {
  clock = new ManualClock(T0);
});

/** Each read takes `latencyMs` of the manual clock (the 5-9 ms a real line takes); `down` makes it time out. */
class SlowBus implements PollBus {
  latencyMs = 7;
  down = false;
  async read(_unit: number, table: 'holding' | 'input' | 'coil' | 'discrete', start: number, count: number): Promise<ReadBlock> {
    await sleep(clock, this.latencyMs);
    if (this.down) throw new ModbusTimeoutError(1, 100);
    if (table === 'coil' || table === 'discrete') return { table, start, bits: Array.from({ length: count }, () => true) };
    return { table, start, words: Uint16Array.from({ length: count }, (_, i) => start + i) };
  }
}

const always = { mode: 'always' as const, deadband: 0, deadbandKind: 'absolute' as const, maxSilenceMs: 0 };
const meter = deviceConfig({
  name: 'meter',
  pollIntervalMs: 1000,
  cloud: { accessToken: 't', allowCreate: false },
  points: [pointConfig({ id: 'voltage', address: 10, report: always }), pointConfig({ id: 'status', address: 200, table: 'input', report: always })],
});

function rig(latencyMs: number) {
  const bus = new SlowBus();
  bus.latencyMs = latencyMs;
  const outbox = new FakeOutbox();
  const reporter = new Reporter([meter], outbox, silentLogger(), clock);
  const poller = new Poller({ bus, devices: [compileDevice(meter)], sink: reporter, logger: silentLogger(), random: () => 0, clock, wall: clock, timers: clock, offlineAfterFailedCycles: 1 });
  const reports = () => outbox.appended.map(({ payload, ts }) => ({ body: JSON.parse(payload) as Record<string, unknown>, ts }));
  return { bus, poller, reporter, reports };
}

const inOrder = (times: number[]) => times.every((t, i) => i === 0 || t >= times[i - 1]);

describe('report order at a device\'s first answer', () => {
  for (const latencyMs of [0, 5, 9, 400]) {
    it(`start with reads of ${latencyMs} ms: online, then the values, both at the cycle's start`, async () => {
      const { poller, reports } = rig(latencyMs);
      poller.start();
      await clock.advanceAsync(2_500);
      poller.stop();
      const sent = reports();
      expect(sent.slice(0, 2).map((r) => r.body)).toEqual([{ online: true }, { voltage: 10, status: 200 }]);
      expect(sent[0].ts).toBe(sent[1].ts);
      expect(sent[1].ts).toBe(T0);
      expect(inOrder(sent.map((r) => r.ts))).toBe(true);
    });
  }

  it('a link reconnect during a cycle: the snapshot\'s online report is not later than the values of that cycle after it', async () => {
    const { poller, reporter, reports } = rig(400);
    poller.start();
    await clock.advanceAsync(1_200);
    // The second cycle started at T0 + 1000 and reads until T0 + 1800: the link comes back meanwhile.
    reporter.snapshotNext('meter');
    await clock.advanceAsync(1_000);
    poller.stop();
    const sent = reports();
    expect(sent.map((r) => r.body)).toEqual([{ online: true }, { voltage: 10, status: 200 }, { online: true }, { voltage: 10, status: 200 }]);
    expect(sent.map((r) => r.ts - T0)).toEqual([0, 0, 0, 1000]);
  });

  it('back after an outage: offline, then online and the values in time order', async () => {
    const { bus, poller, reports } = rig(8);
    poller.start();
    await clock.advanceAsync(1_500);
    bus.down = true;
    await clock.advanceAsync(1_000);
    bus.down = false;
    await clock.advanceAsync(1_000);
    poller.stop();
    const sent = reports();
    const bodies = sent.map((r) => r.body);
    const offline = bodies.findIndex((b) => b.online === false);
    expect(offline).toBeGreaterThan(0);
    expect(bodies.slice(offline, offline + 3)).toEqual([{ online: false }, { online: true }, { voltage: 10, status: 200 }]);
    expect(sent[offline + 1].ts).toBe(sent[offline + 2].ts);
    expect(inOrder(sent.map((r) => r.ts))).toBe(true);
  });
});
