// CommandService with a fake device: validation before the bus, write then read back, commands;
// once retired (its device replaced by a reload) no operation reaches the bus; CloudValues of a
// replaced device reports nothing more.
import { describe, expect, it } from 'vitest';
import { CommandService, type DeviceIo } from '../../src/device/commands.js';
import type { CommandConfig } from '../../src/core/config/command-types.js';
import type { DeviceConfig, PointConfig } from '../../src/core/config/site-types.js';
import { silentLogger, type Logger } from '../../src/ops/log.js';
import { captureLogger } from '../helpers/capture-logger.js';
import type { ReadBlock, WriteOp } from '../../src/core/points/codec.js';
import type { Table } from '../../src/core/points/types.js';
import { compileDevice } from '../../src/core/config/compile.js';
import { CloudValues } from '../../src/device/cloud-values.js';

function point(p: Partial<PointConfig> & Pick<PointConfig, 'id' | 'address'>): PointConfig {
  return {
    table: 'holding', type: 'uint16', bit: 0, length: 1, wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0,
    writable: true, report: { mode: 'change', deadband: 0, deadbandKind: 'absolute', maxSilenceMs: 0 }, ...p,
  };
}

const device: DeviceConfig = {
  name: 'pump-1', bus: 'line1', unitId: 1, pollIntervalMs: 1000,
  limits: { maxRegistersPerRead: 125, maxBitsPerRead: 2000, maxGap: 8, forceMultiWrite: false },
  commands: [],
  streams: [],
  points: [
    point({ id: 'setpoint', address: 0, type: 'int16', scale: 0.1, min: -50, max: 150 }),
    point({ id: 'speed', address: 1, type: 'float32' }),
    point({ id: 'status', address: 10, writable: false }),
    point({ id: 'relay', address: 5, table: 'coil', type: 'bool' }),
    point({ id: 'clamped', address: 20, min: 0, max: 100 }),
  ],
};

/** A device whose registers and coils live in maps; records every operation in order. */
class FakeDevice implements DeviceIo {
  registers = new Map<number, number>();
  coils = new Map<number, boolean>();
  log: string[] = [];
  failWrites = false;
  /** Simulates a device that clamps what it is given (read-back differs from the write). */
  clampAt?: { address: number; max: number };

  async read(table: Table, start: number, count: number): Promise<ReadBlock> {
    this.log.push(`read ${table} ${start}+${count}`);
    if (table === 'coil' || table === 'discrete') return { table, start, bits: Array.from({ length: count }, (_, i) => this.coils.get(start + i) ?? false) };
    return { table, start, words: Uint16Array.from({ length: count }, (_, i) => this.registers.get(start + i) ?? 0) };
  }

  async write(op: WriteOp): Promise<void> {
    if (this.failWrites) throw new Error('unit 1 did not answer within 1000 ms');
    this.log.push(`write ${op.kind} ${op.address}`);
    if (op.kind === 'coil') this.coils.set(op.address, op.value);
    else if (op.kind === 'registers') op.words.forEach((w, i) => this.registers.set(op.address + i, this.clampAt?.address === op.address + i ? Math.min(w, this.clampAt.max) : w));
  }

  async sleep(ms: number): Promise<void> {
    this.log.push(`sleep ${ms}`);
  }
}

const commands: CommandConfig[] = [
  {
    method: 'start_pump', requiredParams: ['speed'],
    steps: [
      { kind: 'write', point: 'speed', param: 'speed' },
      { kind: 'pulse', point: 'relay', value: true, ms: 500, restore: false },
      { kind: 'delay', ms: 100 },
      { kind: 'read', points: ['speed', 'status'] },
    ],
  },
];

function service(fake = new FakeDevice(), logger: Logger = silentLogger()) {
  return { fake, svc: new CommandService(compileDevice(device), commands, fake, logger) };
}

describe('applyAttributes', () => {
  it('writes valid keys, reads them back and reports what the device holds', async () => {
    const { fake, svc } = service();
    fake.clampAt = { address: 20, max: 50 };
    const result = await svc.applyAttributes({ setpoint: 21.5, relay: true, clamped: 80 }, 'push');
    expect(result).toEqual({ applied: { setpoint: 21.5, relay: true, clamped: 50 }, rejected: {}, failed: {}, corrected: {} });
    expect(fake.registers.get(0)).toBe(215);
    expect(fake.log.filter((l) => l.startsWith('write'))).toHaveLength(3);
    // Read back as a poll would read them: one request per table run (20 is beyond maxGap 8 from 0).
    expect(fake.log.filter((l) => l.startsWith('read'))).toEqual(['read coil 5+1', 'read holding 0+1', 'read holding 20+1']);
  });

  it.each([
    [{ nope: 1 }, 'nope', 'unknown attribute "nope" for device pump-1', []],
    [{ status: 3 }, 'status', 'attribute "status" is not writable', ['read holding 10+1']],
    [{ setpoint: 'hot' }, 'setpoint', undefined, ['read holding 0+1']],
    [{ setpoint: 200 }, 'setpoint', undefined, ['read holding 0+1']],
    [{ clamped: -1 }, 'clamped', undefined, ['read holding 20+1']],
    [{ relay: { on: true } }, 'relay', undefined, ['read coil 5+1']],
  ])('refuses %o without writing, and reads a known point back', async (values, key, reason, reads) => {
    const { fake, svc } = service();
    const result = await svc.applyAttributes(values, 'push');
    expect(Object.keys(result.rejected)).toEqual([key]);
    if (reason) expect(result.rejected[key]).toBe(reason);
    else expect(result.rejected[key]).toMatch(/\S/);
    expect(fake.log).toEqual(reads);
    expect(Object.keys(result.corrected)).toEqual(reads.length > 0 ? [key] : []);
  });

  it('corrects a refused setpoint with the value the device really holds', async () => {
    const capture = captureLogger();
    const { fake, svc } = service(new FakeDevice(), capture.logger);
    fake.registers.set(0, 215);
    const result = await svc.applyAttributes({ speed: 2999, setpoint: 999 }, 'push');
    expect(result.applied).toEqual({ speed: 2999 });
    expect(result.corrected).toEqual({ setpoint: 21.5 });
    expect(fake.registers.get(0)).toBe(215);
    // speed (1..2) and setpoint (0) share one request, as in a poll.
    expect(fake.log.filter((l) => l.startsWith('read'))).toEqual(['read holding 0+3']);
    const lines = capture.lines().filter((l) => l.msg === 'cloud write refused');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ device: 'pump-1', source: 'push', refused: 1, failed: 0, keys: 'setpoint', corrected: 1, correctedKeys: 'setpoint' });
  });

  it('corrects a point whose write failed on the bus by reading it back', async () => {
    const { fake, svc } = service();
    fake.registers.set(20, 42);
    fake.failWrites = true;
    const result = await svc.applyAttributes({ clamped: 7 }, 'sync:period');
    expect(result.failed.clamped).toContain('did not answer');
    expect(result.corrected).toEqual({ clamped: 42 });
  });

  it('a push of 24,000 unknown keys logs one line, touches no bus and lists a few names', async () => {
    const capture = captureLogger();
    const { fake, svc } = service(new FakeDevice(), capture.logger);
    const values = Object.fromEntries(Array.from({ length: 24_000 }, (_, i) => [`ghost_${i}`, i]));
    const result = await svc.applyAttributes({ ...values, setpoint: 999 }, 'push');
    expect(Object.keys(result.rejected)).toHaveLength(24_001);
    expect(fake.log).toEqual(['read holding 0+1']);
    expect(capture.lines()).toHaveLength(1);
    expect(capture.lines()[0]).toMatchObject({ refused: 24_001, keys: 'ghost_0, ghost_1, ghost_2, ghost_3, ghost_4 and 23996 more' });
    expect(capture.lines()[0].reasons).toHaveLength(5);
  });

  it('a key named __proto__ is refused like any unknown key', async () => {
    const { fake, svc } = service();
    const result = await svc.applyAttributes(JSON.parse('{"__proto__": 1, "setpoint": 10}') as Record<string, unknown>, 'push');
    expect(Object.keys(result.rejected)).toEqual(['__proto__']);
    expect(result.applied).toEqual({ setpoint: 10 });
    expect(fake.log.filter((l) => l.startsWith('write'))).toEqual(['write registers 0']);
  });

  it('applies the valid keys of a mixed push and names the bad ones', async () => {
    const { svc } = service();
    const result = await svc.applyAttributes({ setpoint: 10, bogus: 1, speed: 12.5 }, 'push');
    expect(result.applied).toEqual({ setpoint: 10, speed: 12.5 });
    expect(Object.keys(result.rejected)).toEqual(['bogus']);
  });

  it('reports bus failures per key without throwing', async () => {
    const { fake, svc } = service();
    fake.failWrites = true;
    const result = await svc.applyAttributes({ setpoint: 10 }, 'push');
    expect(result.failed.setpoint).toContain('did not answer');
    expect(result.applied).toEqual({});
  });
});

describe('runCommand', () => {
  it('runs a site command in order: write, pulse, delay, read', async () => {
    const { fake, svc } = service();
    fake.registers.set(10, 7);
    const outcome = await svc.runCommand('start_pump', { speed: 1450 });
    expect(outcome).toEqual({ ok: true, result: { speed: 1450, status: 7 } });
    // The read step is planned like a poll: speed (1..2) and status (10) share one request.
    expect(fake.log).toEqual(['write registers 1', 'write coil 5', 'sleep 500', 'write coil 5', 'sleep 100', 'read holding 1+10']);
    expect(fake.coils.get(5)).toBe(false);
  });

  it.each([
    ['start_pump', {}, 400, 'missing params: speed'],
    ['start_pump', { speed: 'fast' }, 422, undefined],
    ['fly', {}, 404, 'unknown method "fly" (known: read, write, start_pump)'],
    ['read', {}, 400, 'read needs params {"keys": ["<attribute>", ...]}'],
    ['read', { keys: ['ghost'] }, 422, 'unknown attribute(s): ghost'],
    ['write', [], 400, 'write needs params {"<attribute>": value, ...}'],
    ['write', { setpoint: 10, status: 1 }, 422, 'attribute "status" is not writable'],
  ])('%s %o answers error %d', async (method, params, code, message) => {
    const { fake, svc } = service();
    const outcome = await svc.runCommand(method, params);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.error.code).toBe(code);
      if (message) expect(outcome.error.message).toBe(message);
    }
    expect(fake.log.filter((l) => l.startsWith('write'))).toEqual([]);
  });

  it('built-in read and write', async () => {
    const { fake, svc } = service();
    fake.registers.set(10, 3);
    expect(await svc.runCommand('read', { keys: ['status'] })).toEqual({ ok: true, result: { status: 3 } });
    expect(await svc.runCommand('write', { setpoint: -5 })).toEqual({ ok: true, result: { setpoint: -5 } });
  });

  it('read: a key listed 2,000 times is one bus request and one value', async () => {
    const { fake, svc } = service();
    fake.registers.set(10, 9);
    const outcome = await svc.runCommand('read', { keys: Array.from({ length: 2000 }, () => 'status') });
    expect(outcome).toEqual({ ok: true, result: { status: 9 } });
    expect(fake.log).toEqual(['read holding 10+1']);
  });

  it('read: repeated and neighbouring keys are merged as in a poll', async () => {
    const { fake, svc } = service();
    const outcome = await svc.runCommand('read', { keys: ['status', 'setpoint', 'status', 'relay', 'setpoint', 'speed'] });
    expect(outcome.ok && Object.keys(outcome.result).sort()).toEqual(['relay', 'setpoint', 'speed', 'status']);
    expect(fake.log).toEqual(['read coil 5+1', 'read holding 0+11']);
  });

  it('read: thousands of unknown keys give a short error naming a few', async () => {
    const { fake, svc } = service();
    const outcome = await svc.runCommand('read', { keys: Array.from({ length: 3000 }, (_, i) => `ghost_${i}`) });
    expect(outcome).toEqual({ ok: false, error: { code: 422, message: 'unknown attribute(s): ghost_0, ghost_1, ghost_2, ghost_3, ghost_4 and 2995 more' } });
    expect(fake.log).toEqual([]);
  });

  it('a bus failure mid-command is a 503 error, not a throw', async () => {
    const { fake, svc } = service();
    fake.failWrites = true;
    const outcome = await svc.runCommand('start_pump', { speed: 100 });
    expect(outcome).toMatchObject({ ok: false, error: { code: 503 } });
  });
});

describe('a device replaced by a reload', () => {
  it('a retired command path refuses every bus operation not yet started, mid-command too', async () => {
    const { fake, svc } = service();
    let retireAfterPulse = true;
    const sleep = fake.sleep.bind(fake);
    fake.sleep = async (ms: number) => {
      await sleep(ms);
      if (retireAfterPulse) svc.retire();
      retireAfterPulse = false;
    };
    const outcome = await svc.runCommand('start_pump', { speed: 100 });
    // The pulse's restore write, and every step after it, never reach the device.
    expect(fake.log).toEqual(['write registers 1', 'write coil 5', 'sleep 500']);
    expect(outcome).toMatchObject({ ok: false, error: { code: 503, message: expect.stringContaining('was replaced by a reload') } });
    const push = await svc.applyAttributes({ setpoint: 10 }, 'push');
    expect(push.failed).toMatchObject({ setpoint: expect.stringContaining('was replaced by a reload') });
    expect(fake.log).toHaveLength(3);
  });

  it('retired cloud values report nothing: not before a write, not after one that was running', async () => {
    const { fake, svc } = service();
    const confirmed: Array<Record<string, unknown>> = [];
    const reporter = { onConfirmedValues: (_d: string, v: Record<string, unknown>) => void confirmed.push(v), latest: () => ({}) };
    const values = new CloudValues('pump-1', svc, reporter, silentLogger());
    // Retired while its write runs: the old point map's read-back is not reported.
    const write = fake.write.bind(fake);
    fake.write = async (op) => {
      await write(op);
      values.retire();
    };
    await values.apply({ setpoint: 12.5 }, 'push');
    expect(fake.registers.get(0)).toBe(125);
    expect(confirmed).toEqual([]);
    await values.apply({ setpoint: 20 }, 'sync:period');
    await values.correct(['setpoint'], 'test');
    expect(fake.registers.get(0)).toBe(125);
    expect(confirmed).toEqual([]);
  });
});
