import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXIT_USAGE } from '../../../src/cli/io.js';
import { runCli } from '../../helpers/run-cli.js';

describe('fieldgate command dispatch', () => {
  it('prints usage and exits 64 without a command', async () => {
    const c = await runCli([]);
    expect(c.code).toBe(EXIT_USAGE);
    expect(c.out).toContain('usage: fieldgate <command>');
  });

  it('rejects an unknown command with exit 64 and names it', async () => {
    const c = await runCli(['frobnicate']);
    expect(c.code).toBe(EXIT_USAGE);
    expect(c.err).toContain('unknown command "frobnicate"');
  });

  it('prints the version, package.json\'s (the .deb\'s version too)', async () => {
    const c = await runCli(['--version']);
    expect(c.code).toBe(0);
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(c.out).toBe(`${version}\n`);
  });

  it('answers --help and -h on every sub-command with its usage and exit 0', async () => {
    const listing = await runCli(['--help']);
    const commands = [...listing.out.matchAll(/^ {2}(\w+) {2,}/gm)].map((m) => m[1]);
    expect(commands).toEqual(['demo', 'run', 'poll', 'validate', 'read', 'write', 'scan', 'profiles', 'simulate', 'emulator', 'reload', 'status', 'logs', 'web']);
    for (const command of commands) {
      for (const flag of ['--help', '-h']) {
        const c = await runCli([command, flag]);
        expect(c.code, `${command} ${flag}`).toBe(0);
        expect(c.out, `${command} ${flag}`).toContain(`usage: fieldgate ${command}`);
        expect(c.err, `${command} ${flag}`).toBe('');
      }
    }
  });

  it('answers --help after other arguments too (poll SITE --help)', async () => {
    const c = await runCli(['poll', 'site.yaml', '--once', '--help']);
    expect(c.code).toBe(0);
    expect(c.out).toContain('usage: fieldgate poll');
  });
});
