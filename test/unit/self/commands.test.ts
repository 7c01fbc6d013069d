// Own-identity commands with a fake bus and poller (the real ones: test/integration/ops/self-device.test.ts).
import { describe, expect, it } from 'vitest';
import { DEFAULT_SELF_IDENTITY, type SelfCommandLimits } from '../../../src/core/config/self-identity.js';
import type { ReadBlock } from '../../../src/core/points/codec.js';
import type { Table } from '../../../src/core/points/types.js';
import { QueueFullError } from '../../../src/core/queue-full-error.js';
import type { Sample } from '../../../src/device/poll-cycle.js';
import { ModbusExceptionError } from '../../../src/field/modbus/errors.js';
import { SelfCommands, type RemoteReadBus } from '../../../src/ops/self/commands.js';
import { TemporaryLogLevel } from '../../../src/ops/self/log-level.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { gatewayStatus } from './status-fixture.js';

class FakeBus implements RemoteReadBus {
  readonly kind = 'rtu' as const;
  readonly reads: Array<{ unit: number; table: Table; start: number; count: number; priority: string }> = [];
  failWith: unknown;
  read(unit: number, table: Table, start: number, count: number, options: { priority: 'high' }): Promise<ReadBlock> {
    this.reads.push({ unit, table, start, count, priority: options.priority });
    if (this.failWith) return Promise.reject(this.failWith);
    if (table === 'coil' || table === 'discrete') return Promise.resolve({ table, start, bits: Array.from({ length: count }, (_, i) => i % 2 === 0) });
    return Promise.resolve({ table, start, words: Uint16Array.from({ length: count }, (_, i) => start + i) });
  }
}

function setup(limits: Partial<SelfCommandLimits> = {}) {
  const clock = new ManualClock();
  const captured = captureLogger();
  let level = 'info';
  const control = { get: () => level, set: (l: string) => { level = l; } };
  const bus = new FakeBus();
  const polls: string[] = [];
  const commands = new SelfCommands({
    limits: { ...DEFAULT_SELF_IDENTITY.commands, ...limits },
    sample: () => ({ status: gatewayStatus(), rssBytes: 50 * 1024 * 1024, at: clock.now() }),
    buses: new Map([['line1', bus]]),
    devices: ['meter-1', 'meter-2'],
    pollDevice: (device) => {
      polls.push(device);
      const sample: Sample = { device, ts: clock.wallNow(), at: clock.now(), values: { voltage: 230.5 }, errors: [] };
      return Promise.resolve(sample);
    },
    logLevel: new TemporaryLogLevel(control, clock, captured.logger),
    time: clock, log: captured.logger,
  });
  let id = 0;
  const run = (method: string, params: Record<string, unknown> = {}) => commands.handle({ id: (id += 1), method, params });
  return { clock, captured, bus, polls, run, level: () => level };
}

describe('own commands', () => {
  it('status: a compact summary', async () => {
    const { run } = setup();
    const outcome = await run('status');
    expect(outcome).toMatchObject({ ok: true, result: { version: '9.9.9', devices: { online: 1, total: 2, offline: 'meter-2' }, rss_mb: 50 } });
    expect(await run('status', { verbose: true })).toMatchObject({ ok: false, error: { code: 400, message: expect.stringMatching(/unknown param/) } });
  });

  it('unknown methods are refused by name, bounded, nothing done', async () => {
    const { run, bus, polls } = setup();
    for (const method of ['shell', 'exec', 'write_file', 'set_config', '__proto__', 'x'.repeat(100_000)]) {
      const outcome = await run(method, { cmd: 'rm -rf /' });
      expect(outcome).toMatchObject({ ok: false, error: { code: 404 } });
      if (!outcome.ok) expect(outcome.error.message.length).toBeLessThan(300);
    }
    expect(bus.reads).toEqual([]);
    expect(polls).toEqual([]);
  });

  it('read: raw registers at cloud priority, decoded with a type', async () => {
    const { run, bus } = setup();
    const raw = await run('read', { bus: 'line1', unit: 3, address: 100, count: 2 });
    expect(raw).toEqual({ ok: true, result: { bus: 'line1', unit: 3, table: 'holding', address: 100, raw: [100, 101] } });
    const typed = await run('read', { bus: 'line1', unit: 3, table: 'input', address: 0, count: 2, type: 'uint32' });
    // Words 0,1 and 2,3 big-endian: 0x00000001 and 0x00020003.
    expect(typed).toMatchObject({ ok: true, result: { type: 'uint32', values: [{ address: 0, value: 1 }, { address: 2, value: 0x20003 }], raw: [0, 1, 2, 3] } });
    const coils = await run('read', { bus: 'line1', unit: 3, table: 'coil', address: 5, count: 3 });
    expect(coils).toMatchObject({ ok: true, result: { raw: [1, 0, 1] } });
    expect(bus.reads.map((r) => r.priority)).toEqual(['high', 'high', 'high']);
    expect(bus.reads[1]).toMatchObject({ unit: 3, table: 'input', start: 0, count: 4 });
  });

  it('read: the Modbus error is the answer', async () => {
    const { run, bus } = setup();
    bus.failWith = new ModbusExceptionError(3, 2);
    expect(await run('read', { bus: 'line1', unit: 3, address: 0 })).toEqual({ ok: false, error: { code: 503, message: 'unit 3 answered with Modbus exception 2 (Illegal data address)' } });
    bus.failWith = new QueueFullError('bus line1', 10);
    expect(await run('read', { bus: 'line1', unit: 3, address: 0 })).toMatchObject({ ok: false, error: { code: 429 } });
  });

  it('read: hostile params touch nothing and spend no token', async () => {
    const { run, bus } = setup({ readsPerMinute: 1 });
    for (const params of [{ bus: 'line1', unit: 1, address: -1 }, { bus: 'line1', unit: 1, address: 0, count: 1e6 }, { bus: ['line1'], unit: 1, address: 0 }]) {
      expect(await run('read', params)).toMatchObject({ ok: false, error: { code: 400 } });
    }
    expect(bus.reads).toEqual([]);
    expect(await run('read', { bus: 'line1', unit: 1, address: 0 })).toMatchObject({ ok: true });
  });

  it('a flood of reads and polls is rate limited with a clear answer, and refills with time', async () => {
    const { run, bus, polls, clock } = setup({ readsPerMinute: 30, maxPending: 1000 });
    const outcomes = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? run('read', { bus: 'line1', unit: 1, address: i }) : run('poll', { device: 'meter-1' }))));
    const limited = outcomes.filter((o) => !o.ok);
    expect(outcomes.length - limited.length).toBe(30);
    expect(bus.reads.length + polls.length).toBe(30);
    for (const o of limited) expect(o).toMatchObject({ ok: false, error: { code: 429, message: expect.stringMatching(/^rate limited: at most 30 reads and polls per minute; retry in \d+ s$/) } });
    clock.advance(2000);
    expect(await run('read', { bus: 'line1', unit: 1, address: 0 })).toMatchObject({ ok: true });
    expect(await run('read', { bus: 'line1', unit: 1, address: 0 })).toMatchObject({ ok: false, error: { code: 429 } });
  });

  it('more commands at once than maxPending are answered busy', async () => {
    const { run, bus } = setup({ maxPending: 2 });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const read = bus.read.bind(bus);
    bus.read = async (...args) => { await gate; return read(...args); };
    const slow = [run('read', { bus: 'line1', unit: 1, address: 0 }), run('read', { bus: 'line1', unit: 1, address: 1 })];
    expect(await run('status')).toMatchObject({ ok: false, error: { code: 429, message: 'gateway busy: more than 2 commands pending' } });
    release();
    expect(await Promise.all(slow)).toMatchObject([{ ok: true }, { ok: true }]);
    expect(await run('status')).toMatchObject({ ok: true });
  });

  it('poll: one configured device now, its sample is the answer', async () => {
    const { run, polls } = setup();
    expect(await run('poll', { device: 'meter-2' })).toMatchObject({ ok: true, result: { device: 'meter-2', values: { voltage: 230.5 }, errors: [] } });
    expect(await run('poll', { device: 'meter-9' })).toMatchObject({ ok: false, error: { code: 422, message: 'unknown device "meter-9" (known: meter-1, meter-2)' } });
    expect(await run('poll', { device: { $ne: null } })).toMatchObject({ ok: false, error: { code: 400 } });
    expect(await run('poll', {})).toMatchObject({ ok: false, error: { code: 400 } });
    expect(await run('poll', { device: 'meter-1', all: true })).toMatchObject({ ok: false, error: { code: 400 } });
    expect(polls).toEqual(['meter-2']);
  });

  it('log_level: temporary, bounded, reverts by itself, logged at both changes', async () => {
    const { run, level, clock, captured } = setup({ logLevelMaxMs: 3_600_000 });
    expect(await run('log_level', { level: 'debug', durationS: 60 })).toMatchObject({ ok: true, result: { level: 'debug', previous: 'info' } });
    expect(level()).toBe('debug');
    // A second change extends it; the level to revert to stays the original.
    clock.advance(30_000);
    expect(await run('log_level', { level: 'trace', durationS: 60 })).toMatchObject({ ok: true, result: { previous: 'debug' } });
    clock.advance(59_000);
    expect(level()).toBe('trace');
    clock.advance(1000);
    expect(level()).toBe('info');
    expect(captured.count('log level changed temporarily')).toBe(2);
    expect(captured.count('log level restored')).toBe(1);
  });

  it('log_level: hostile params change nothing', async () => {
    const { run, level, clock } = setup({ logLevelMaxMs: 3_600_000 });
    const bad: Array<Record<string, unknown>> = [
      { level: 'silent', durationS: 60 }, { level: 'verbose', durationS: 60 }, { level: 'debug' }, { level: 'debug', durationS: 0 },
      { level: 'debug', durationS: -5 }, { level: 'debug', durationS: 3601 }, { level: 'debug', durationS: '60' },
      { level: 'debug', durationS: Number.POSITIVE_INFINITY }, { level: ['debug'], durationS: 60 }, { level: 'debug', durationS: 60, file: '/tmp/x' },
    ];
    for (const params of bad) expect(await run('log_level', params)).toMatchObject({ ok: false, error: { code: 400 } });
    expect(level()).toBe('info');
    expect(clock.sleeping).toBe(0);
  });
});
