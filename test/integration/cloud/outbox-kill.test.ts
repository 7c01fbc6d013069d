import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../../src/cloud/outbox/outbox.js';
import { TSX_FROM_SOURCE } from '../../helpers/child.js';

const writer = fileURLToPath(new URL('./fixtures/outbox-writer.ts', import.meta.url));
let dir: string | undefined;

afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('Outbox after kill -9', () => {
  it('keeps every record committed before the kill, in order', async () => {
    dir = mkdtempSync(join(tmpdir(), 'outbox-kill-'));
    const path = join(dir, 'outbox.db');
    const child = spawn(process.execPath, [...TSX_FROM_SOURCE, writer, path], { stdio: ['ignore', 'pipe', 'inherit'] });
    let committed = 0;
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        const match = /^committed (\d+)$/.exec(line);
        if (match) committed = Number(match[1]);
      }
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    await expect.poll(() => committed, { timeout: 20_000, interval: 20 }).toBeGreaterThan(2000);
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const seen = committed;

    const outbox = new Outbox({ path });
    try {
      const records = outbox.peek('dev', 10_000_000);
      expect(records.length).toBeGreaterThanOrEqual(seen);
      const numbers = records.map((r) => (JSON.parse(r.payload.toString()) as { n: number }).n);
      expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => i));
      expect(outbox.stats().devices.dev.depth).toBe(records.length);
    } finally {
      outbox.close();
    }
  });
});
