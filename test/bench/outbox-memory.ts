// Memory per queued report while the outbox file refuses writes, both modes in the same run: a
// fresh process each (outbox-memory-child.ts, the unit's node flags), 1,000 reports/s of 33 bytes
// under an 8 MiB cap for 25 s (memory-first holds up to the cap; write-ahead at most 20 x 500).
// Each figure is printed beside what the cap counts per report (payload + recordOverheadBytes):
// the ratio says how far the cap under- (> 1) or over-counts (< 1) what memory really holds.
import { spawn } from 'node:child_process';
import { benchNodeFlags } from './northbound.js';

interface MemoryFigures {
  mode: string;
  appended: number;
  depth: number;
  dropped: number;
  countedPerReport: number;
  residentPerReport: number;
  residentAfterGcPerReport: number;
  peakPerReport: number;
  heldPerReport: number;
}

const CHILD = new URL('./outbox-memory-child.ts', import.meta.url).pathname;

export async function measureOutboxMemory(mode: string, capBytes: number, perS: number, seconds: number): Promise<MemoryFigures> {
  const child = spawn(process.execPath, [...benchNodeFlags(), '--expose-gc', '--conditions=fieldgate-source', '--import', 'tsx', CHILD, mode, String(capBytes), String(perS), String(seconds)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`outbox memory child (${mode}) exited ${String(code)}`);
  return JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as MemoryFigures;
}

export async function run(log: (line: string) => void): Promise<void> {
  log('## Outbox memory per queued report, file refusing writes (8 MiB cap, 1,000 reports/s of 33 bytes, 25 s)');
  log('');
  log('| mode | appended | queued | counted | counted by the cap per report (B) | resident per report (B, ratio) | after a full GC (B, ratio) | peak (B, ratio) | heap + buffers after GC (B, ratio) |');
  log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const mode of ['memory-first', 'write-ahead']) {
    const f = await measureOutboxMemory(mode, 8 * 1024 * 1024, 1000, 25);
    const ratio = (bytes: number) => `${bytes.toFixed(0)}, ${(bytes / f.countedPerReport).toFixed(2)}x`;
    log(`| ${mode} | ${f.appended} | ${f.depth} | ${f.dropped} | ${f.countedPerReport.toFixed(0)} | ${ratio(f.residentPerReport)} | ${ratio(f.residentAfterGcPerReport)} | ${ratio(f.peakPerReport)} | ${ratio(f.heldPerReport)} |`);
  }
  log('');
}
