// Power-cut safety: a child that commits in a loop is killed with SIGKILL at random moments,
// at least 200 times, and after every kill the file passes `PRAGMA integrity_check` and reopens
// with every device's records in order. The child is bundled once (esbuild) so that a start
// costs a plain `node`, not a TypeScript loader: 200 starts fit in the suite's time.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboxStore } from '../../../src/cloud/outbox/outbox-store.js';
import type { OutboxMode } from '../../../src/cloud/outbox/outbox-options.js';

const KILLS = Number(process.env.OUTBOX_KILLS ?? 200);
const LANES = 4;
const fixture = fileURLToPath(new URL('./fixtures/outbox-committer.ts', import.meta.url));
let dir: string;
let bundle: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'outbox-commit-kill-'));
  bundle = join(dir, 'committer.cjs');
  buildSync({ entryPoints: [fixture], bundle: true, platform: 'node', format: 'cjs', outfile: bundle, packages: 'external', logLevel: 'error' });
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Starts the child, waits until it has committed once, kills it `delayMs` later. */
function killMidCommit(path: string, mode: OutboxMode, delayMs: number): Promise<NodeJS.Signals | null> {
  const child = spawn(process.execPath, [bundle, path, mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { PATH: process.env.PATH, NODE_PATH: resolve('node_modules') },
  });
  return new Promise((done, fail) => {
    child.once('error', fail);
    child.once('exit', (code, signal) => (signal === null ? fail(new Error(`committer exited with ${code}`)) : done(signal)));
    child.stdout.once('data', () => setTimeout(() => child.kill('SIGKILL'), delayMs));
  });
}

/** The file is sound and each device's records come back in the order they were appended. */
function check(path: string): { problems: string[]; rows: number } {
  const store = new OutboxStore(path);
  const problems = store.integrityCheck().filter((line) => line !== 'ok');
  let rows = 0;
  try {
    for (const device of ['a', 'b', 'c']) {
      const numbers = store.after(device, 0, 1_000_000).map((r) => Number(r.payload.toString().slice(0, 16)));
      rows += numbers.length;
      const unordered = numbers.findIndex((n, i) => i > 0 && n <= numbers[i - 1]);
      if (unordered >= 0) problems.push(`${device}: ${numbers[unordered - 1]} before ${numbers[unordered]}`);
    }
  } finally {
    store.close();
  }
  return { problems, rows };
}

describe.each<OutboxMode>(['memory-first', 'write-ahead'])('outbox file killed mid-commit (%s)', (mode) => {
  it(`stays sound after ${KILLS / 2} random kills`, async () => {
    const runs = KILLS / 2;
    const problems: string[] = [];
    let killed = 0;
    let rows = 0;
    await Promise.all(Array.from({ length: LANES }, async (_, lane) => {
      const path = join(dir, `${mode}-${lane}.sqlite`);
      for (let i = lane; i < runs; i += LANES) {
        const signal = await killMidCommit(path, mode, Math.random() * 40);
        if (signal === 'SIGKILL') killed += 1;
        const result = check(path);
        rows = Math.max(rows, result.rows);
        problems.push(...result.problems.map((p) => `kill ${i}: ${p}`));
      }
    }));
    console.log(`${mode}: ${killed} kills mid-commit, ${problems.length} integrity or order problems, up to ${rows} rows in a file`);
    expect(killed).toBe(runs);
    expect(problems).toEqual([]);
    expect(rows).toBeGreaterThan(0);
  }, 120_000);
});
