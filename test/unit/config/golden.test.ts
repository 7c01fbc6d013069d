// Golden config cases: each invalid site file must produce exactly the issue lines in <case>.expected.txt.
// Hostile files too (deep, UTF-16, binary, reserved names, URL credentials): none may echo the file.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkHost } from '../../../src/ops/host-checks.js';
import { ConfigError, loadConfig } from '../../../src/ops/site-file.js';
import { formatIssue } from '../../../src/core/config/issues.js';

const INVALID = fileURLToPath(new URL('../../fixtures/config/invalid/', import.meta.url));
const cases = readdirSync(INVALID).filter((name) => /\.(ya?ml|json)$/.test(name)).sort();

function issueLines(file: string): string[] {
  try {
    // With the host checks `validate` and `run` make (CA file, state directory).
    loadConfig(file, {}, checkHost);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // File-level issues name the file; the expected text says <file> so it does not depend on the checkout.
    return err.issues.map((issue) => formatIssue(issue).replaceAll(file, '<file>'));
  }
  throw new Error(`${file} loaded without any issue`);
}

describe('golden invalid site files', () => {
  it('has at least 15 distinct cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(15);
  });

  it.each(cases)('never echoes a secret written in %s', (name) => {
    // The fixtures spell their secrets with these markers; no issue line may carry one.
    const text = issueLines(`${INVALID}${name}`).join('\n');
    for (const marker of ['hunter2', 's3cret', 'AKIA']) expect(text).not.toContain(marker);
  });

  it.each(cases)('%s', (name) => {
    const expectedFile = `${INVALID}${name.replace(/\.(ya?ml|json)$/, '')}.expected.txt`;
    const expected = readFileSync(expectedFile, 'utf8').split('\n').filter((line) => line.length > 0);
    expect(expected.length).toBeGreaterThan(0);
    expect(issueLines(`${INVALID}${name}`)).toEqual(expected);
  });
});
