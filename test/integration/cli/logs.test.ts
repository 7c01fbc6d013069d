// `fieldgate logs` end to end on real input: saved JSON log lines through the bundled pino-pretty,
// hostile lines included, and the real journalctl for the journal path.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT_UNAVAILABLE, EXIT_USAGE } from '../../../src/cli/io.js';
import { journalExists } from '../../../src/cli/logs.js';
import { TSX_FROM_SOURCE } from '../../helpers/child.js';
import { runCli } from '../../helpers/run-cli.js';
import { skipUnless } from '../../helpers/skips.js';

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
  const hasJournal = journalExists();
  const journalSkip = !hasJournal ? 'no systemd journal on this machine (journald keeps none)' : 'journalctl missing (Debian package systemd)';
  it('reads the unit\'s journal with the real journalctl (a unit with no entries prints nothing)', skipUnless(hasJournalctl && hasJournal, journalSkip), async () => {
    const c = await runCli(['logs', '--unit', 'fieldgate-test-no-such-unit.service', '--lines', '5']);
    expect(c.code).toBe(0);
    expect(c.out).toBe('');
  });

  it('where journald keeps no journal: one plain line naming --input, exit 69, also with --follow (no hang)', skipUnless(!hasJournal, 'this machine has a systemd journal'), async () => {
    for (const args of [[], ['--follow'], ['--device', 'meter-1', '--level', 'warn']]) {
      const c = await runCli(['logs', ...args]);
      expect(c.code).toBe(EXIT_UNAVAILABLE);
      expect(c.out).toBe('');
      expect(c.err.trimEnd().split('\n')).toHaveLength(1);
      expect(c.err).toMatch(/^fieldgate logs: no systemd journal on this machine .*fieldgate logs --input FILE/);
    }
  });

  it('tells a journal from none by journald\'s directories', () => {
    const root = mkdtempSync(join(dir, 'journald-'));
    const persistent = join(root, 'var');
    const volatile = join(root, 'run');
    mkdirSync(join(persistent, '0123456789abcdef'), { recursive: true });
    expect(journalExists([persistent, volatile])).toBe(false);
    writeFileSync(join(persistent, '0123456789abcdef', 'system.journal'), '');
    expect(journalExists([persistent, volatile])).toBe(true);
    expect(journalExists([volatile])).toBe(false);
    writeFileSync(join(persistent, 'system@x.journal~'), '');
    expect(journalExists([persistent])).toBe(true);
  });
});

describe('fieldgate logs | head', () => {
  it('ends quietly with exit 0 when the reader goes away (EPIPE)', () => {
    const big = join(dir, 'big.json');
    writeFileSync(big, `${Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ level: 30, time: 1_700_000_000_000 + i, msg: 'device online', i })).join('\n')}\n`);
    const errFile = join(dir, 'epipe.err');
    const rcFile = join(dir, 'epipe.rc');
    for (const extra of ['', '--json']) {
      const command = `"$0" ${TSX_FROM_SOURCE.join(' ')} test/system/fixtures/cli.ts logs --input "$1" ${extra} 2>"$2"; echo $? >"$3"`;
      const r = spawnSync('sh', ['-c', `{ ${command}; } | head -n 1`, process.execPath, big, errFile, rcFile], { encoding: 'utf8', timeout: 60_000 });
      expect(r.stdout.split('\n').filter((l) => l !== '')).toHaveLength(1);
      expect(readFileSync(errFile, 'utf8')).toBe('');
      expect(readFileSync(rcFile, 'utf8').trim()).toBe('0');
    }
  }, 120_000);
});
