// `fieldgate poll --once` on a serial bus whose port another process holds: one row per device
// (not one "Cannot lock port" per point), and one line saying who holds it. The fieldgate service
// is recognised by the lock on the site's state directory (the kernel's lock table, as `reload`
// finds the daemon); any other holder gets the `fuser` hint. flock(1) holds both locks here, the
// same flock(2) kind the daemon (state-lock.ts) and serialport (lock: true) take.
import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChild, type Child } from '../../helpers/child.js';
import { runCli } from '../../helpers/run-cli.js';
import { startPtyPair, type PtyPair } from '../../helpers/socat.js';
import { waitFor } from '../../helpers/wait.js';

let pair: PtyPair;
let dir: string;
const holders: Child[] = [];

/** flock(1) holding `path` until stopped; resolved once /proc/locks shows its lock. */
async function hold(path: string): Promise<Child> {
  const child = startChild('flock', ['-n', path, 'sleep', '600']);
  holders.push(child);
  const inode = String(statSync(path).ino);
  await waitFor(() => readFileSync('/proc/locks', 'utf8').split('\n').some((l) => /FLOCK/.test(l) && l.includes(`:${inode} `)) || child.exited(), { what: `flock on ${path}` });
  if (child.exited()) throw new Error(`flock exited: ${child.output()}`);
  return child;
}

function site(stateDir: string): string {
  const file = join(dir, 'site.yaml');
  writeFileSync(file, `gateway:\n  stateDir: ${stateDir}\nbuses:\n  - { name: line, kind: rtu, path: ${pair.a}, baudRate: 9600, timeoutMs: 300 }\ndevices:\n`
    + [1, 2].map((u) => `  - name: meter-${u}\n    bus: line\n    unitId: ${u}\n    points:\n${[0, 1, 2].map((a) => `      - { id: p${a}, table: holding, address: ${a * 10}, type: uint16 }\n`).join('')}`).join(''));
  return file;
}

beforeAll(async () => {
  pair = await startPtyPair();
  dir = mkdtempSync(join(tmpdir(), 'fieldgate-poll-held-'));
  await hold(realpathSync(pair.a));
});

afterAll(async () => {
  for (const child of holders) await child.stop();
  await pair?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('fieldgate poll beside a holder of the serial port', () => {
  it('names another program and fuser when no fieldgate daemon holds the state directory', async () => {
    const stateDir = mkdtempSync(join(dir, 'state-free-'));
    const poll = await runCli(['poll', site(stateDir), '--once']);
    expect(poll.code).toBe(69);
    expect(poll.out).not.toContain('Cannot lock port');
    expect(poll.out.split('\n').filter((l) => l.includes('ERROR port in use'))).toHaveLength(2);
    expect(poll.err).toContain(`${pair.a} is in use by another program`);
    expect(poll.err).toContain(`fuser ${pair.a}`);
  });

  it('says the fieldgate service holds it, and how to stop it, when the daemon of the site holds its state directory', async () => {
    const stateDir = mkdtempSync(join(dir, 'state-held-'));
    const daemon = await hold(stateDir);
    const poll = await runCli(['poll', site(stateDir), '--once']);
    expect(poll.code).toBe(69);
    expect(poll.out.split('\n').filter((l) => /^meter-\d/.test(l))).toHaveLength(2);
    expect(poll.err).toMatch(new RegExp(`bus line: ${pair.a} is held by the fieldgate service \\(the daemon of ${stateDir}, PID \\d+\\): stop it first \\(sudo systemctl stop fieldgate\\)`));
    expect(poll.err.split('\n').filter((l) => l.includes('held by'))).toHaveLength(1);
    await daemon.stop();
  });
});
