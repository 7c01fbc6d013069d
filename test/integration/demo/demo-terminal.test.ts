// The demo in a real terminal: Ctrl-C's siblings end it as cleanly as Ctrl-C. SIGTERM (kill,
// systemd), SIGHUP to it alone or to its process group (the shell passing on a closed window) and
// the terminal itself hung up: each exits 0, leaves no socat behind and nothing in the temporary
// directory. (Before: SIGHUP killed it, leaving socat running and both directories behind.)
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TSX_FROM_SOURCE } from '../../helpers/child.js';
import { requireProgram } from '../../helpers/peers.js';
import { isAlive, processTable, runInTerminal, type Terminal } from '../../helpers/terminal.js';
import { waitFor } from '../../helpers/wait.js';

const CLI = 'test/system/fixtures/cli.ts';
/** What the demo leaves in the temporary directory while it runs: its state and the pty links. */
const DEMO_TEMP = /^fieldgate-(demo|pty)-/;

let terminal: Terminal | undefined;
let temp: string | undefined;
afterEach(async () => {
  await terminal?.kill();
  terminal = undefined;
  if (temp) rmSync(temp, { recursive: true, force: true });
  temp = undefined;
});

/** The demo running in a terminal, every device online, with its socat child and its temp files. */
async function runningDemo(): Promise<{ term: Terminal; socat: number; dir: string }> {
  requireProgram('socat');
  const dir = mkdtempSync(join(tmpdir(), 'fieldgate-terminal-'));
  temp = dir;
  const term = await runInTerminal(process.execPath, [...TSX_FROM_SOURCE, CLI, 'demo', '--health-port', '0'], { ...process.env, TMPDIR: dir });
  terminal = term;
  await waitFor(() => /plc on plc-net: online, link up/.test(term.screen()) && /meter-1 on rs485: online, link up/.test(term.screen()), { what: 'the demo online in its terminal', timeoutMs: 120_000, intervalMs: 200 });
  const socat = processTable().filter((p) => p.ppid === term.pid && p.comm === 'socat');
  expect(socat).toHaveLength(1);
  expect(socat[0].cmdline).toContain(dir);
  expect(readdirSync(dir).filter((name) => DEMO_TEMP.test(name)).sort().map((name) => name.slice(0, 14))).toEqual(['fieldgate-demo', 'fieldgate-pty-']);
  return { term, socat: socat[0].pid, dir };
}

async function expectCleanEnd(term: Terminal, socat: number, dir: string): Promise<void> {
  expect(await term.ended).toEqual({ exit: 0, signal: null });
  expect(isAlive(socat)).toBe(false);
  expect(processTable().filter((p) => p.cmdline.includes(dir))).toEqual([]);
  expect(readdirSync(dir).filter((name) => DEMO_TEMP.test(name))).toEqual([]);
}

describe('fieldgate demo in a terminal', () => {
  it('ends cleanly on Ctrl-C (the baseline the others must match)', async () => {
    const { term, socat, dir } = await runningDemo();
    term.ctrlC();
    await expectCleanEnd(term, socat, dir);
  }, 180_000);

  it('shows no raw JSON, and SIGTERM ends it with socat and its temp files gone', async () => {
    const { term, socat, dir } = await runningDemo();
    expect(term.screen()).not.toMatch(/"level":|"msg":/);
    process.kill(term.pid, 'SIGTERM');
    await expectCleanEnd(term, socat, dir);
  }, 180_000);

  it('ends cleanly on SIGHUP to the demo alone, stopping socat itself', async () => {
    const { term, socat, dir } = await runningDemo();
    process.kill(term.pid, 'SIGHUP');
    await expectCleanEnd(term, socat, dir);
  }, 180_000);

  it('ends cleanly on SIGHUP to its process group (the shell passing on a closed window)', async () => {
    const { term, socat, dir } = await runningDemo();
    process.kill(-term.pid, 'SIGHUP');
    await expectCleanEnd(term, socat, dir);
  }, 180_000);

  it('ends cleanly when its terminal is hung up', async () => {
    const { term, socat, dir } = await runningDemo();
    term.hangup();
    await expectCleanEnd(term, socat, dir);
  }, 180_000);
});
