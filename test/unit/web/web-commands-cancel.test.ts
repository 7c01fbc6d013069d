// The page's read and scan forms when their HTTP request closes (the signal the server aborts):
// a read still waiting leaves the bus queue, a scan asks no further unit.
import { describe, expect, it } from 'vitest';
import { Bus } from '../../../src/field/modbus/bus.js';
import { silentLogger } from '../../../src/ops/log.js';
import type { GatewayStatus } from '../../../src/ops/status.js';
import { WebCommands } from '../../../src/ops/web/web-commands.js';
import { rtuBusConfig } from '../../helpers/bus-configs.js';
import { FakeTransport } from '../../helpers/fake-transport.js';
import { ManualClock } from '../../helpers/manual-clock.js';

async function page() {
  const clock = new ManualClock(1_700_000_000_000);
  const transport = new FakeTransport(clock);
  const bus = new Bus({ config: rtuBusConfig({ interFrameDelayMs: 0, timeoutMs: 300 }), transportFactory: () => transport, clock, timers: clock, logger: silentLogger() });
  bus.start();
  await clock.advanceAsync(50);
  const limits = { readMaxRegisters: 125, readMaxBits: 2000, readsPerMinute: 60, logLevelMaxMs: 60_000, maxPending: 4 };
  const parts = { buses: new Map([['line', { kind: 'rtu' as const, read: bus.read.bind(bus) }]]), devices: [], pollDevice: () => Promise.reject(new Error('no poller')) };
  const level = { get: () => 'info', set: () => undefined };
  const commands = new WebCommands(parts, new Map(), limits, () => ({}) as GatewayStatus, level, clock, silentLogger(), 10);
  return { clock, transport, bus, commands };
}

describe('page forms whose request closed', () => {
  it('a read waiting behind a poll leaves the queue and never reaches the line', async () => {
    const { clock, transport, bus, commands } = await page();
    const poll = bus.read(1, 'holding', 0, 1);
    const asker = new AbortController();
    const form = commands.read({ bus: 'line', unit: 2, table: 'holding', address: 7, count: 1 }, asker.signal);
    await clock.advanceAsync(1);
    asker.abort();
    await clock.advanceAsync(1000);
    await poll;
    expect(await form).toMatchObject({ ok: false, error: { message: expect.stringContaining('cancelled') } });
    expect(transport.calls.map((c) => c.unit)).toEqual([1]);
    expect(bus.stats().cancelled).toBe(1);
  });

  it('a scan asks no further unit once its request closed', async () => {
    const { clock, transport, commands } = await page();
    transport.behaviour = () => 'timeout';
    const asker = new AbortController();
    const scan = commands.scan({ bus: 'line', from: 1, to: 5 }, asker.signal);
    await clock.advanceAsync(100);
    expect(transport.calls).toHaveLength(1);
    asker.abort();
    await clock.advanceAsync(5000);
    expect(await scan).toMatchObject({ ok: false, error: { message: 'scan stopped at unit 2: the page request closed' } });
    expect(transport.calls).toHaveLength(1);
  });
});
