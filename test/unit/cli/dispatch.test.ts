import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli.js';
import { EXIT_USAGE } from '../../../src/cli/io.js';

function captureIo() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  return { io: { stdout, stderr, env: {} }, out: () => out, err: () => err };
}

describe('fieldgate command dispatch', () => {
  it('prints usage and exits 64 without a command', async () => {
    const c = captureIo();
    expect(await main([], c.io)).toBe(EXIT_USAGE);
    expect(c.out()).toContain('usage: fieldgate <command>');
  });

  it('rejects an unknown command with exit 64 and names it', async () => {
    const c = captureIo();
    expect(await main(['frobnicate'], c.io)).toBe(EXIT_USAGE);
    expect(c.err()).toContain('unknown command "frobnicate"');
  });

  it('prints the version', async () => {
    const c = captureIo();
    expect(await main(['--version'], c.io)).toBe(0);
    expect(c.out()).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it('answers --help and -h on every sub-command with its usage and exit 0', async () => {
    const listing = captureIo();
    await main(['--help'], listing.io);
    const commands = [...listing.out().matchAll(/^ {2}(\w+) {2,}/gm)].map((m) => m[1]);
    expect(commands).toEqual(['demo', 'run', 'poll', 'validate', 'read', 'write', 'scan', 'simulate', 'emulator', 'status']);
    for (const command of commands) {
      for (const flag of ['--help', '-h']) {
        const c = captureIo();
        expect(await main([command, flag], c.io), `${command} ${flag}`).toBe(0);
        expect(c.out(), `${command} ${flag}`).toContain(`usage: fieldgate ${command}`);
        expect(c.err(), `${command} ${flag}`).toBe('');
      }
    }
  });

  it('answers --help after other arguments too (poll SITE --help)', async () => {
    const c = captureIo();
    expect(await main(['poll', 'site.yaml', '--once', '--help'], c.io)).toBe(0);
    expect(c.out()).toContain('usage: fieldgate poll');
  });
});
