// The built-in `read` command on a SunSpec-like device (fake bus): only the asked points come back,
// each asked point without a value is named under "@absent" with why, and hostile reads (thousands
// of points, unknown ids, a factor the device lacks, a line that fails) get bounded answers.
import { describe, expect, it } from 'vitest';
import { ABSENT_KEY, CommandService, type CommandOutcome, type DeviceIo } from '../../../src/device/commands.js';
import type { CommandConfig } from '../../../src/core/config/command-types.js';
import type { DeviceConfig, PointConfig } from '../../../src/core/config/site-types.js';
import { compileDevice } from '../../../src/core/config/compile.js';
import { ModbusTimeoutError } from '../../../src/field/modbus/errors.js';
import { silentLogger } from '../../../src/ops/log.js';
import type { ReadBlock } from '../../../src/core/points/codec.js';
import type { Table } from '../../../src/core/points/types.js';
import { makePoint } from '../points/make-point.js';

const NOT_IMPLEMENTED_INT16 = 0x8000;
const NOT_IMPLEMENTED_UINT16 = 0xffff;

/** Registers in a map (0 when unset); every read is logged; a read touching `silent` times out. */
class FakeInverter implements DeviceIo {
  reads: string[] = [];
  silent = new Set<number>();
  constructor(readonly words: Map<number, number>) {}
  async read(table: Table, start: number, count: number): Promise<ReadBlock> {
    this.reads.push(`${start}+${count}`);
    for (let a = start; a < start + count; a++) if (this.silent.has(a)) throw new ModbusTimeoutError(1, 1000);
    return { table, start, words: Uint16Array.from({ length: count }, (_, i) => this.words.get(start + i) ?? 0) };
  }
  async write(): Promise<void> {}
  async sleep(): Promise<void> {}
}

const ro = (p: Partial<PointConfig> & Pick<PointConfig, 'id' | 'address'>) => makePoint({ type: 'int16', notImplemented: -32768, writable: false, ...p });
const points: PointConfig[] = [
  ro({ id: 'W', address: 14, scaleFactor: 'W_SF' }),
  ro({ id: 'W_SF', address: 15 }),
  ro({ id: 'VAr', address: 20, scaleFactor: 'VAr_SF' }),
  ro({ id: 'VAr_SF', address: 21 }),
  ro({ id: 'PF', address: 22, scaleFactor: 'PF_SF' }),
  ro({ id: 'PF_SF', address: 23 }),
  ro({ id: 'St', address: 38, type: 'uint16', notImplemented: 65535 }),
  ro({ id: 'Tmp', address: 300, scaleFactor: 'Tmp_SF' }),
  ro({ id: 'Tmp_SF', address: 400 }), // beyond maxGap: a request of its own
];
const device: DeviceConfig = {
  name: 'inverter-1', bus: 'line1', unitId: 1, pollIntervalMs: 1000,
  limits: { maxRegistersPerRead: 125, maxBitsPerRead: 2000, maxGap: 8, forceMultiWrite: false },
  commands: [], streams: [], points,
};
const HEALTHY: Array<[number, number]> = [[14, 12345], [15, 0xffff], [20, 500], [21, 0xfffe], [22, 950], [23, 0xfffe], [38, 4], [300, 355], [400, 0xffff]];
const snapshot: CommandConfig = { method: 'snapshot', requiredParams: [], steps: [{ kind: 'read', points: ['W', 'VAr'] }] };

function service(changes: Array<[number, number]> = [], config: DeviceConfig = device) {
  const fake = new FakeInverter(new Map([...HEALTHY, ...changes]));
  return { fake, svc: new CommandService(compileDevice(config), [snapshot], fake, silentLogger()) };
}

const ok = (result: Record<string, unknown>): CommandOutcome => ({ ok: true, result });

describe('read: only the asked points, and why each missing one is missing', () => {
  it.each([
    { name: 'a scaled point alone: the factor read along is not returned', keys: ['W'], set: [], want: ok({ W: 1234.5 }) },
    { name: 'a factor asked for is returned', keys: ['W_SF', 'W'], set: [], want: ok({ W_SF: -1, W: 1234.5 }) },
    { name: 'several points, their factors left out', keys: ['W', 'VAr', 'PF', 'St'], set: [], want: ok({ W: 1234.5, VAr: 5, PF: 9.5, St: 4 }) },
    {
      name: 'a point holding "not implemented"', keys: ['W', 'St'], set: [[38, NOT_IMPLEMENTED_UINT16]],
      want: ok({ W: 1234.5, [ABSENT_KEY]: { St: 'not implemented (holds 65535)' } }),
    },
    {
      name: 'a point whose factor is not implemented', keys: ['W', 'VAr'], set: [[21, NOT_IMPLEMENTED_INT16]],
      want: ok({ W: 1234.5, [ABSENT_KEY]: { VAr: 'scale factor "VAr_SF": not implemented (holds -32768)' } }),
    },
    {
      name: 'a point whose factor is out of range', keys: ['PF'], set: [[23, 99]],
      want: ok({ [ABSENT_KEY]: { PF: 'scale factor "PF_SF" is 99, outside -10..10' } }),
    },
    {
      name: 'nothing implemented at all', keys: ['W', 'W_SF'], set: [[14, NOT_IMPLEMENTED_INT16], [15, NOT_IMPLEMENTED_INT16]],
      want: ok({ [ABSENT_KEY]: { W: expect.stringMatching(/^not implemented/), W_SF: expect.stringMatching(/^not implemented/) } }),
    },
    { name: 'a key listed 2,000 times', keys: Array(2000).fill('PF'), set: [], want: ok({ PF: 9.5 }) },
  ])('$name', async ({ keys, set, want }) => {
    const { svc } = service(set as Array<[number, number]>);
    expect(await svc.runCommand('read', { keys })).toEqual(want);
  });

  it('a site command\'s read step also returns only its points and names the absent ones', async () => {
    const { svc } = service([[21, NOT_IMPLEMENTED_INT16]]);
    expect(await svc.runCommand('snapshot', {})).toEqual(ok({ W: 1234.5, [ABSENT_KEY]: { VAr: expect.stringMatching(/^scale factor "VAr_SF"/) } }));
  });

  it('the read plan is a poll\'s: factors share the requests of their points', async () => {
    const { fake, svc } = service();
    await svc.runCommand('read', { keys: ['W', 'VAr', 'PF', 'Tmp'] });
    expect(fake.reads).toEqual(['14+10', '300+1', '400+1']);
  });
});

describe('read: hostile requests', () => {
  it.each([
    { name: 'an unknown id among known ones', keys: ['W', 'ghost'], code: 422, message: 'unknown attribute(s): ghost' },
    { name: 'the reply\'s own absent key', keys: [ABSENT_KEY], code: 422, message: `unknown attribute(s): ${ABSENT_KEY}` },
    { name: 'an id that names an object property', keys: ['__proto__', 'constructor'], code: 422, message: 'unknown attribute(s): __proto__, constructor' },
    { name: '3,000 unknown ids', keys: Array.from({ length: 3000 }, (_, i) => `ghost_${i}`), code: 422, message: 'unknown attribute(s): ghost_0, ghost_1, ghost_2, ghost_3, ghost_4 and 2995 more' },
    { name: 'keys not a list', keys: 'W', code: 400, message: 'read needs params {"keys": ["<attribute>", ...]}' },
    { name: 'a key not a string', keys: ['W', 7], code: 400, message: 'read needs params {"keys": ["<attribute>", ...]}' },
  ])('$name: refused before the bus', async ({ keys, code, message }) => {
    const { fake, svc } = service();
    expect(await svc.runCommand('read', { keys })).toEqual({ ok: false, error: { code, message } });
    expect(fake.reads).toEqual([]);
  });

  it('a factor that fails on the line fails the read (503), naming the asked point, not a number', async () => {
    const { fake, svc } = service();
    fake.silent.add(400);
    const outcome = await svc.runCommand('read', { keys: ['Tmp', 'W'] });
    expect(outcome).toEqual({ ok: false, error: { code: 503, message: 'Tmp: scale factor "Tmp_SF" failed: unit 1 did not answer within 1000 ms' } });
  });

  describe('a device of 3,000 points', () => {
    const many = Array.from({ length: 3000 }, (_, i) => ro({ id: `p${i}`, address: 1000 + i * 2, scaleFactor: `p${i}_SF` }))
      .flatMap((p) => [p, ro({ id: `${p.id}_SF`, address: p.address + 1 })]);
    const big: DeviceConfig = { ...device, points: many };
    const keys = many.filter((p) => p.scaleFactor !== undefined).map((p) => p.id);

    it('none implemented: one reason per point, the reply a bounded size, planned like a poll', async () => {
      const { fake, svc } = service(many.map((p) => [p.address, NOT_IMPLEMENTED_INT16]), big);
      const outcome = await svc.runCommand('read', { keys });
      expect(outcome.ok).toBe(true);
      if (!outcome.ok) return;
      const absent = outcome.result[ABSENT_KEY] as Record<string, string>;
      expect(Object.keys(outcome.result)).toEqual([ABSENT_KEY]);
      expect(Object.keys(absent)).toEqual(keys);
      // At most one short reason per point: no echo of the request, no stack, no helper points.
      for (const why of Object.values(absent)) expect(why.length).toBeLessThanOrEqual(40);
      const bytes = JSON.stringify(outcome.result).length;
      expect(bytes).toBeLessThan(keys.length * 50); // measured: 121,903 bytes for 3,000 points
      expect(fake.reads).toHaveLength(Math.ceil(6000 / 125));
    });

    it('all factors missing: every point absent, no factor in the result', async () => {
      const { svc } = service(many.filter((p) => p.id.endsWith('_SF')).map((p) => [p.address, NOT_IMPLEMENTED_INT16]), big);
      const outcome = await svc.runCommand('read', { keys });
      expect(outcome.ok && Object.keys(outcome.result[ABSENT_KEY] as object)).toHaveLength(3000);
      expect(outcome.ok && Object.keys(outcome.result).filter((k) => k.endsWith('_SF'))).toEqual([]);
    });

    it('the line dead: one 503 whose message names five points and counts the rest', async () => {
      const { fake, svc } = service([], big);
      for (const p of many) fake.silent.add(p.address);
      const outcome = await svc.runCommand('read', { keys });
      expect(outcome).toMatchObject({ ok: false, error: { code: 503 } });
      if (outcome.ok) return;
      expect(outcome.error.message).toMatch(/^p0: unit 1 did not answer within 1000 ms; .*; and 2995 more$/);
      expect(outcome.error.message.length).toBeLessThan(500);
    });
  });
});
