// `fieldgate profiles check FILE`: golden cases in test/fixtures/profiles/check/ (<case>.expected.txt
// holds stdout with the fixture directory as <dir>; exit 78 on problems, 0 when fine).
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/run-cli.js';
import { SHIPPED_PROFILE_DIR } from '../../../src/ops/profile-library.js';

const DIR = fileURLToPath(new URL('../../fixtures/profiles/check/', import.meta.url));
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
    if (name === 'acme-good.yaml') {
      expect(code).toBe(0);
      expect(err).toBe('');
    } else {
      expect(code).toBe(78);
      const problems = expected.split('\n').filter((line) => line.length > 0).length;
      expect(err).toBe(`fieldgate profiles check: ${problems} problem${problems === 1 ? '' : 's'} in ${DIR}${name}\n`);
    }
  });

  it('accepts every shipped profile', async () => {
    for (const name of readdirSync(SHIPPED_PROFILE_DIR).filter((n) => n.endsWith('.yaml'))) {
      const { code, out } = await runCli(['profiles', 'check', `${SHIPPED_PROFILE_DIR}${name}`]);
      expect({ name, code }).toEqual({ name, code: 0 });
      expect(out).toContain('is well-formed');
    }
  });

  it('says a missing file is a problem, and a check without a file is a usage error', async () => {
    const missing = await runCli(['profiles', 'check', `${DIR}nothing-here.yaml`]);
    expect(missing.code).toBe(78);
    expect(missing.out).toMatch(/nothing-here\.yaml: not a readable profile \(ENOENT/);
    const usage = await runCli(['profiles', 'check']);
    expect(usage.code).toBe(64);
    expect(usage.err).toContain('check needs exactly one profile file');
  });
});
