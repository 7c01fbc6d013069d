// `fieldgate logs` end to end on real input: saved JSON log lines through the bundled pino-pretty,
// hostile lines included, and the real journalctl for the journal path.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT_UNAVAILABLE, EXIT_USAGE } from '../../../src/cli/io.js';
import { runCli } from '../../helpers/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'fieldgate-logs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const LINES = [
  JSON.stringify({ level: 30, time: 1_700_000_000_000, pid: 1, hostname: 'pi', component: 'poller', device: 'meter-1', msg: 'device online' }),
  JSON.stringify({ level: 40, time: 1_700_000_001_000, pid: 1, hostname: 'pi', component: 'poller', device: 'meter-2', msg: 'device offline', reason: 'timeout' }),
  JSON.stringify({ level: 50, time: 1_700_000_002_000, pid: 1, hostname: 'pi', component: 'cloud', device: 'meter-1', msg: 'link down', cause: 'auth-refused' }),
  'Stopped fieldgate.service - fieldgate edge gateway.',
  '{"level":30,"msg":"trunc',
  JSON.stringify({ level: 30, time: 1_700_000_003_000, msg: `long ${'x'.repeat(200_000)}` }),
];
const logFile = join(dir, 'journal.json');
writeFileSync(logFile, `${LINES.join('\n')}\n`);

describe('fieldgate logs --input', () => {
  it('prints every line readable: levels and messages of entries, other lines as they are', async () => {
    const c = await runCli(['logs', '--input', logFile]);
    expect(c.code).toBe(0);
    expect(c.out).toMatch(/INFO.*device online/);
    expect(c.out).toMatch(/WARN.*device offline/);
    expect(c.out).toMatch(/reason: "timeout"/);
    expect(c.out).toMatch(/ERROR.*link down/);
    expect(c.out).toContain('Stopped fieldgate.service - fieldgate edge gateway.\n');
    expect(c.out).toContain('{"level":30,"msg":"trunc\n');
    expect(c.out).toContain('x'.repeat(200_000));
    expect(c.out).not.toMatch(/"level":30,"time"/);
    expect(c.out).not.toContain('hostname');
  });

  it('keeps only one device\'s entries with --device (and the lines that are not entries)', async () => {
    const c = await runCli(['logs', '--input', logFile, '--device', 'meter-2']);
    expect(c.code).toBe(0);
    expect(c.out).toContain('device offline');
    expect(c.out).not.toContain('device online');
    expect(c.out).not.toContain('link down');
    expect(c.out).toContain('Stopped fieldgate.service');
  });

  it('keeps a level and above with --level, as JSON with --json', async () => {
    const c = await runCli(['logs', '--input', logFile, '--level', 'warn', '--json']);
    expect(c.code).toBe(0);
    const entries = c.out.split('\n').filter((l) => l.startsWith('{"level"') && !l.includes('trunc')).map((l) => JSON.parse(l) as { msg: string });
    expect(entries.map((e) => e.msg)).toEqual(['device offline', 'link down']);
  });

  it.each([
    [['--level', 'loud'], '--level must be'],
    [['--level', 'silent'], '--level must be'],
    [['--lines=-3'], '--lines must be a whole number'],
    [['--lines', '10x'], '--lines must be a whole number'],
    [['--input', '-', '--follow'], 'does not go with --input'],
    [['--since', 'today'], 'Unknown option'],
  ])('refuses %j with exit 64 and says why', async (args, message) => {
    const c = await runCli(['logs', ...args]);
    expect(c.code).toBe(EXIT_USAGE);
    expect(c.err).toContain(message);
    expect(c.err).toContain('usage: fieldgate logs');
  });

  it('says which file it cannot read, exit 69', async () => {
    const c = await runCli(['logs', '--input', join(dir, 'missing.json')]);
    expect(c.code).toBe(EXIT_UNAVAILABLE);
    expect(c.err).toContain(`cannot read ${join(dir, 'missing.json')}`);
  });
});

describe('fieldgate logs from the journal', () => {
  const hasJournalctl = spawnSync('journalctl', ['--version']).status === 0;
  it.runIf(hasJournalctl)('reads the unit\'s journal with the real journalctl (a unit with no entries prints nothing)', async () => {
    const c = await runCli(['logs', '--unit', 'fieldgate-test-no-such-unit.service', '--lines', '5']);
    expect(c.code).toBe(0);
    expect(c.out).toBe('');
  });
});
