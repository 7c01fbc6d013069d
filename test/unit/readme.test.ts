// The README stays true: its site-file snippet validates, and the commands it names exist.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
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

  it('links only to files that exist, from the README and every page in docs/', () => {
    const pages = ['README.md', ...readdirSync('docs').filter((name) => name.endsWith('.md')).map((name) => join('docs', name))];
    const broken = pages.flatMap((page) => [...readFileSync(page, 'utf8').matchAll(/\]\(([^)\s]+)\)/g)]
      .map((match) => match[1].split('#')[0])
      .filter((target) => target !== '' && !/^[a-z]+:/.test(target))
      .filter((target) => !existsSync(join(dirname(page), target)))
      .map((target) => `${page} -> ${target}`));
    expect(broken).toEqual([]);
  });

  it('has a demo page that documents every option of fieldgate demo', async () => {
    const { runCli } = await import('../helpers/run-cli.js');
    const help = (await runCli(['demo', '--help'])).out;
    const page = readFileSync('docs/demo.md', 'utf8');
    const options = [...new Set([...help.matchAll(/--[a-z][a-z-]+/g)].map((m) => m[0]))];
    expect(options).toEqual(['--once', '--duration', '--health-port', '--config']);
    for (const option of options) expect(page).toContain(option);
    expect(page).toContain('FIELDGATE_HEALTH_PORT');
  });
});
