import { beforeEach, describe, expect, it } from 'vitest';
import type { BusConfig } from '../../../src/core/config/site-types.js';
import { Bus } from '../../../src/field/modbus/bus.js';
import { BusDownError, ModbusFrameError, PortClosedError } from '../../../src/field/modbus/errors.js';
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

function setup(config: BusConfig, random = () => 0) {
  const transport = new FakeTransport(clock);
  const log = captureLogger();
  const bus = new Bus({ config, transportFactory: () => transport, clock, timers: clock, logger: log.logger, random });
  return { bus, transport, log };
}

function gaps(times: number[]): number[] {
  return times.slice(1).map((t, i) => t - (times[i] as number));
}

describe('reopen with capped exponential back-off', () => {
  it('retries a failing open at 100, 200, 400, 800, 1000, 1000 ms and logs down/up once', async () => {
    const { bus, transport, log } = setup(rtuBusConfig({ reconnect: { initialMs: 100, maxMs: 1000, jitter: 0 } }));
    transport.openResults = [false, false, false, false, false, false, true];
    bus.start();
    await clock.advanceAsync(50);
    expect(bus.stats().state).toBe('down');
    expect(bus.stats().downReason).toBe('cannot open fake: ENOENT: no such port');
    await expect(bus.read(1, 'holding', 0, 1)).rejects.toBeInstanceOf(BusDownError);

    await clock.advanceAsync(10_000);
    expect(gaps(transport.openCalls)).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(bus.stats()).toMatchObject({ state: 'up', reconnects: 1, downRejects: 1 });
    expect(log.count('bus down')).toBe(1);
    expect(log.count('bus up')).toBe(1);
    const read = bus.read(1, 'holding', 0, 1);
    await clock.advanceAsync(100);
    await expect(read).resolves.toMatchObject({ table: 'holding' });
  });

  it('logs the cause again, once, each time it changes while the bus stays down', async () => {
    const { bus, transport, log } = setup(rtuBusConfig({ reconnect: { initialMs: 100, maxMs: 100, jitter: 0 } }));
    const missing = 'No such file or directory, cannot open /dev/ttyUSB0';
    const refused = 'Permission denied, cannot open /dev/ttyUSB0';
    transport.openResults = [missing, missing, missing, refused, refused, refused, missing, refused, true];
    bus.start();
    await clock.advanceAsync(2_000);
    const warnings = log.lines().filter((l) => l.msg === 'bus down' || l.msg === 'bus still down, cause changed');
    // Missing, then refused (the real cause now): each once; going back to one already told is not news.
    expect(warnings.map((l) => [l.msg, l.reason])).toEqual([
      ['bus down', `cannot open fake: ${missing}`],
      ['bus still down, cause changed', `cannot open fake: ${refused}`],
    ]);
    expect(warnings[1]).toMatchObject({ downForMs: 300, target: expect.any(String) });
    expect(log.count('bus up')).toBe(1);
    // A new spell starts afresh.
    transport.drop('device unplugged');
    transport.openResults = [missing, true];
    await clock.advanceAsync(1_000);
    expect(log.count('bus down')).toBe(2);
    expect(log.count('bus still down, cause changed')).toBe(2);
  });

  it('shows the cause that holds now in status while it stays down', async () => {
    const { bus, transport } = setup(rtuBusConfig({ reconnect: { initialMs: 100, maxMs: 100, jitter: 0 } }));
    transport.openResults = ['ENOENT: gone', 'EACCES: refused', 'ENOENT: gone', 'EACCES: refused'];
    bus.start();
    await clock.advanceAsync(50);
    expect(bus.stats().downReason).toBe('cannot open fake: ENOENT: gone');
    await clock.advanceAsync(100);
    expect(bus.stats().downReason).toBe('cannot open fake: EACCES: refused');
    await clock.advanceAsync(100);
    expect(bus.stats().downReason).toBe('cannot open fake: ENOENT: gone');
  });

  it('takes up to `jitter` off each delay', async () => {
    const { bus, transport } = setup(tcpBusConfig({ reconnect: { initialMs: 1000, maxMs: 4000, jitter: 0.5 } }), () => 1);
    transport.openResults = [false, false, false, false, true];
    bus.start();
    await clock.advanceAsync(20_000);
    expect(gaps(transport.openCalls)).toEqual([500, 1000, 2000, 2000]);
  });

  it('fails queued and in-flight requests fast when the port vanishes, then resumes by itself', async () => {
    const { bus, transport, log } = setup(rtuBusConfig());
    bus.start();
    await clock.advanceAsync(50);
    transport.latencyMs = 50;
    const reads = [1, 2, 3].map((unit) => bus.read(unit, 'holding', 0, 1).catch((err: unknown) => err));
    await clock.advanceAsync(10);
    transport.drop('device unplugged');
    const [inFlight, ...queued] = await Promise.all(reads);
    expect(inFlight).toBeInstanceOf(PortClosedError);
    for (const err of queued) expect(err).toBeInstanceOf(BusDownError);
    expect((queued[0] as Error).message).toBe('bus line1 is down: device unplugged');
    expect(bus.stats().state).toBe('down');

    await clock.advanceAsync(200);
    expect(bus.stats()).toMatchObject({ state: 'up', reconnects: 1 });
    const again = bus.read(1, 'holding', 0, 1);
    await clock.advanceAsync(200);
    await expect(again).resolves.toMatchObject({ start: 0 });
    expect(log.count('bus down')).toBe(1);
    expect(log.count('bus up')).toBe(1);
  });

  it('notices a port that closed without an event and reopens it', async () => {
    const { bus, transport } = setup(rtuBusConfig());
    bus.start();
    await clock.advanceAsync(50);
    transport.behaviour = () => 'silent-close';
    await expect(Promise.all([bus.read(1, 'holding', 0, 1), clock.advanceAsync(10)]))
      .rejects.toBeInstanceOf(PortClosedError);
    expect(bus.stats().state).toBe('down');
    transport.behaviour = () => 'ok';
    await clock.advanceAsync(500);
    expect(bus.stats().state).toBe('up');
    expect(transport.openCalls).toHaveLength(2);
  });

  it('stop() during a back-off cancels the reopen', async () => {
    const { bus, transport } = setup(rtuBusConfig());
    transport.openResults = [false];
    bus.start();
    await clock.advanceAsync(10);
    await bus.stop();
    await clock.advanceAsync(10_000);
    expect(transport.openCalls).toHaveLength(1);
    expect(bus.stats().state).toBe('stopped');
  });
});

describe('replies out of step', () => {
  it('reconnects at once and lets queued requests wait for the new connection instead of failing them', async () => {
    const { bus, transport, log } = setup(tcpBusConfig());
    bus.start();
    await clock.advanceAsync(10);
    const opens = transport.openCalls.length;
    const onWire = bus.read(1, 'holding', 0, 1).catch((err: unknown) => err);
    const queued = bus.read(2, 'holding', 5, 1);
    transport.drop('replies out of step: MBAP length 65535 outside 2..254', true);
    await clock.advanceAsync(100);
    expect(await onWire).toBeInstanceOf(ModbusFrameError);
    expect((await queued).words).toEqual(Uint16Array.from([5]));
    expect(transport.openCalls.length).toBe(opens + 1);
    expect(bus.stats()).toMatchObject({ state: 'up', downRejects: 0, reconnects: 1 });
    expect(log.count('bus replies out of step, reconnecting')).toBe(1);
    expect(log.count('bus down')).toBe(0);
  });
});
