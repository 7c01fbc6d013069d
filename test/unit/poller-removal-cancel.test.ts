// A device a reload takes off the schedule while its cycle waits in the bus queue: its reads still
// queued leave the queue (its owner cancels them), the one on the line finishes, and nothing more
// of it reaches the line; the other device on the bus is polled as before.
import { describe, expect, it } from 'vitest';
import { compileDevice } from '../../src/core/config/compile.js';
import { Poller, type Sample } from '../../src/device/poller.js';
import { Bus } from '../../src/field/modbus/bus.js';
import { silentLogger } from '../../src/ops/log.js';
import { rtuBusConfig } from '../helpers/bus-configs.js';
import { deviceConfig, pointConfig } from '../helpers/device-configs.js';
import { FakeTransport } from '../helpers/fake-transport.js';
import { ManualClock } from '../helpers/manual-clock.js';

// Three points far apart: three reads per cycle, one after the other.
const device = (name: string, unitId: number) => compileDevice(deviceConfig({
  name, unitId, pollIntervalMs: 1000,
  points: [pointConfig({ id: 'a', address: 0 }), pointConfig({ id: 'b', address: 300 }), pointConfig({ id: 'c', address: 600 })],
}));

describe('Poller: a removed device\'s queued reads', () => {
  it('leave the bus queue before they reach the line', async () => {
    const clock = new ManualClock(1_000_000);
    const transport = new FakeTransport(clock);
    transport.latencyMs = 100;
    const bus = new Bus({ config: rtuBusConfig({ interFrameDelayMs: 0 }), transportFactory: () => transport, clock, timers: clock, logger: silentLogger() });
    bus.start();
    await clock.advanceAsync(10);
    const samples: Sample[] = [];
    const poller = new Poller({
      bus, devices: [device('keep', 1), device('leave', 2)], logger: silentLogger(), random: () => 0, clock, wall: clock, timers: clock,
      sink: { onSample: (s) => samples.push(s), onDeviceState: () => undefined },
    });
    poller.start();
    // Both cycles start at once: keep's first read goes on the line, leave's waits behind it.
    await clock.advanceAsync(1050);
    // The second cycles: keep's first read on the line, leave's first read queued behind it.
    expect(transport.calls.map((c) => `${c.unit}:${c.address}`)).toEqual(['1:0', '2:0', '1:300', '2:300', '1:600', '2:600', '1:0']);
    expect(bus.stats().queueDepth).toBe(1);
    const before = transport.calls.length;
    const removing = poller.removeDevice('leave');
    await clock.advanceAsync(5000);
    expect(await removing).toBe(true);
    const stopping = poller.stop();
    await clock.advanceAsync(1000);
    await stopping;
    const after = transport.calls.slice(before);
    // Nothing more of the removed device went out (before its owner cancelled it, its reads did).
    expect(after.filter((c) => c.unit === 2)).toEqual([]);
    expect(after.filter((c) => c.unit === 1).length).toBeGreaterThanOrEqual(9);
    expect(bus.stats()).toMatchObject({ queueDepth: 0, cancelled: 1 });
    expect(samples.filter((s) => s.device === 'keep').length).toBeGreaterThanOrEqual(3);
    const stoppingBus = bus.stop();
    await clock.advanceAsync(1000);
    await stoppingBus;
  });
});
