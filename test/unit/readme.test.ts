// The README stays true: its site-file snippet validates, and the commands it names exist.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkConfig, parseSiteText } from '../../src/ops/site-file.js';

const readme = readFileSync('README.md', 'utf8');

describe('README', () => {
  it('shows a site file that validates', () => {
    const block = /```yaml\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    const parsed = parseSiteText(block ?? '', 'README.yaml');
    expect(parsed.issues).toEqual([]);
    const checked = checkConfig(parsed.raw, {});
    expect(checked.issues).toEqual([]);
    expect(checked.config?.site.devices[0].points.map((p) => p.id)).toEqual(['voltage', 'setpoint']);
  });

  it('names the two set-up commands', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm test');
  });

  it('documents every CLI command it lists', async () => {
    const { main } = await import('../../src/cli.js');
    const { PassThrough } = await import('node:stream');
    const stdout = new PassThrough();
    let usage = '';
    stdout.on('data', (c: Buffer) => (usage += c.toString()));
    await main(['--help'], { stdout, stderr: new PassThrough(), env: {} });
    for (const [, name] of readme.matchAll(/^\| `fieldgate (\w+)/gm)) expect(usage).toContain(`  ${name} `);
  });
});
