// One outbox alone in a fresh process, its file refusing every write (SQLITE_FULL at the store's
// transaction, as a full card answers), reports appended at a steady rate until the byte cap holds
// them: what each queued report costs in resident memory and in heap + buffers, against what the
// cap counts for it. Run by outbox-memory.ts with --expose-gc; prints one JSON line.
//
//   outbox-memory-child.ts MODE CAP_BYTES REPORTS_PER_S SECONDS
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openOutbox } from '../../src/cloud/outbox/open-outbox.js';
import { DEFAULT_RECORD_OVERHEAD_BYTES, type OutboxMode } from '../../src/cloud/outbox/outbox-options.js';
import { OutboxStore } from '../../src/cloud/outbox/outbox-store.js';

const [mode, capArg, rateArg, secondsArg] = process.argv.slice(2);
const cap = Number(capArg);
const perS = Number(rateArg);
const seconds = Number(secondsArg);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

/** VmRSS and VmHWM of this process, bytes. */
function rss(): { now: number; peak: number } {
  const status = readFileSync('/proc/self/status', 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { now: field('VmRSS'), peak: field('VmHWM') };
}

const held = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.external + m.arrayBuffers;
};

// A small report as the gateway makes them (33 bytes), distinct values.
const report = (i: number) => JSON.stringify({ t: 21.5, p: 1013, n: i % 100_000 }).padEnd(33, ' ');

const dir = mkdtempSync(join(tmpdir(), 'fg-outbox-memory-'));
let dropped = 0;
const outbox = openOutbox(mode as OutboxMode, {
  path: join(dir, 'outbox.sqlite'), maxBytesTotal: cap, recordOverheadBytes: DEFAULT_RECORD_OVERHEAD_BYTES, storageRetryMs: 1000,
  onDrop: (d) => (dropped += d.records),
});
OutboxStore.prototype.transaction = () => {
  throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
};
gc();
const base = { rss: rss().now, held: held() };
let appended = 0;
const perTick = Math.max(1, Math.round(perS / 100));
const end = Date.now() + seconds * 1000;
let peakRss = base.rss;
while (Date.now() < end) {
  for (let i = 0; i < perTick; i += 1) outbox.append(`d${appended % 4}`, report(appended++), Date.now());
  peakRss = Math.max(peakRss, rss().now);
  await new Promise((r) => setTimeout(r, 10));
}
const stats = outbox.stats();
const beforeGc = rss().now;
gc();
const after = { rss: rss().now, held: held() };
const depth = Math.max(1, stats.depth);
process.stdout.write(`${JSON.stringify({
  mode, cap, perS, appended, depth: stats.depth, dropped, countedPerReport: stats.bytes / depth,
  residentPerReport: (beforeGc - base.rss) / depth, residentAfterGcPerReport: (after.rss - base.rss) / depth,
  peakPerReport: (Math.max(peakRss, rss().peak) - base.rss) / depth, heldPerReport: (after.held - base.held) / depth,
})}\n`);
outbox.close();
rmSync(dir, { recursive: true, force: true });
