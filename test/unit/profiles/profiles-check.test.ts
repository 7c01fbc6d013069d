// `fieldgate profiles check FILE`: golden cases in test/fixtures/profiles/check/ (<case>.expected.txt
// holds stdout with the fixture directory as <dir>; exit 78 on problems, 0 when fine).
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/run-cli.js';
import { SHIPPED_PROFILE_DIR } from '../../../src/ops/profile-library.js';

const DIR = fileURLToPath(new URL('../../fixtures/profiles/check/', import.meta.url));
/** Shipped points that keep their name (test/unit/profiles/vocabulary.test.ts says why). */
const KEPT_NAME_WARNINGS: Record<string, string[]> = {
  'huawei-smartlogger-meter.yaml': ['active_power', 'active_power_l1', 'active_power_l2', 'active_power_l3'],
  'sungrow-sg.yaml': ['meter_power'],
};
const cases = readdirSync(DIR).filter((name) => name.endsWith('.yaml')).sort();

describe('fieldgate profiles check', () => {
  it('has a fine case and at least five broken ones', () => {
    expect(cases).toContain('acme-good.yaml');
    expect(cases.length).toBeGreaterThanOrEqual(6);
  });

  it.each(cases)('%s', async (name) => {
    const expected = readFileSync(`${DIR}${name.replace(/\.yaml$/, '.expected.txt')}`, 'utf8');
    const { code, out, err } = await runCli(['profiles', 'check', `${DIR}${name}`]);
    expect(out.replaceAll(DIR, '<dir>/')).toBe(expected);
    // Fine profiles (vocabulary warnings included) exit 0; any problem exits 78.
    if (expected.includes(' is well-formed\n')) {
      expect(code).toBe(0);
      expect(err).toBe('');
    } else {
      expect(code).toBe(78);
      const problems = expected.split('\n').filter((line) => line.length > 0).length;
      expect(err).toBe(`fieldgate profiles check: ${problems} problem${problems === 1 ? '' : 's'} in ${DIR}${name}\n`);
    }
  });

  it('warns about a point that names a vocabulary quantity otherwise, with the vocabulary\'s name, and still exits 0', async () => {
    const { code, out } = await runCli(['profiles', 'check', `${DIR}acme-vocabulary.yaml`]);
    expect(code).toBe(0);
    expect(out).toContain('points[5] (soc): the vocabulary calls this quantity battery_soc');
    expect(out).not.toContain('board_temperature');
  });

  it('accepts every shipped profile, without a vocabulary warning but the names kept for want of a documented sign', async () => {
    for (const name of readdirSync(SHIPPED_PROFILE_DIR).filter((n) => n.endsWith('.yaml'))) {
      const { code, out } = await runCli(['profiles', 'check', `${SHIPPED_PROFILE_DIR}${name}`]);
      expect({ name, code }).toEqual({ name, code: 0 });
      expect(out).toContain('is well-formed');
      expect({ name, warnings: out.split('\n').filter((line) => line.includes('warning:')).map((line) => /\((\w+)\): /.exec(line)?.[1]) }).toEqual({ name, warnings: KEPT_NAME_WARNINGS[name] ?? [] });
    }
  }, 120_000);

  it('says a missing file is a problem, and a check without a file is a usage error', async () => {
    const missing = await runCli(['profiles', 'check', `${DIR}nothing-here.yaml`]);
    expect(missing.code).toBe(78);
    expect(missing.out).toMatch(/nothing-here\.yaml: not a readable profile \(ENOENT/);
    const usage = await runCli(['profiles', 'check']);
    expect(usage.code).toBe(64);
    expect(usage.err).toContain('check needs exactly one profile file');
  });
});
