// An outbox file as another process sees it: its row count and SQLite's integrity check; and
// damage done to it on purpose (a page zeroed in the file itself).
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import Database from 'libsql';
import { OutboxStore } from '../../src/cloud/outbox/outbox-store.js';
import type { ReportOutbox } from '../../src/core/outbox-types.js';

/** The outbox's page size (new files). */
export const OUTBOX_PAGE_BYTES = 1024;

/** Another connection checkpoints the WAL into the file and truncates it. */
export function checkpoint(path: string): void {
  const db = new Database(path);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

/** Zeroes the page holding the first copy of `text` in the file; returns the page number (never the header page). */
export function zeroPageHolding(path: string, text: string): number {
  const at = readFileSync(path).indexOf(text);
  if (at < OUTBOX_PAGE_BYTES) throw new Error(`"${text}" not found past the first page of ${path}`);
  const page = Math.floor(at / OUTBOX_PAGE_BYTES);
  const fd = openSync(path, 'r+');
  writeSync(fd, Buffer.alloc(OUTBOX_PAGE_BYTES), 0, OUTBOX_PAGE_BYTES, page * OUTBOX_PAGE_BYTES);
  closeSync(fd);
  return page;
}

/** Another connection writes a little: the outbox's own connection drops its page cache and reads the file again. */
export function touch(path: string): void {
  const db = new Database(path);
  db.exec('CREATE TABLE IF NOT EXISTS touch (x); INSERT INTO touch VALUES (1);');
  db.close();
}

function withStore<T>(path: string, read: (store: OutboxStore) => T): T {
  const store = new OutboxStore(path);
  try {
    return read(store);
  } finally {
    store.close();
  }
}

export function rowsIn(path: string): number {
  return withStore(path, (store) => store.totals().reduce((n, t) => n + t.depth, 0));
}

export function integrityOf(path: string): string[] {
  return withStore(path, (store) => store.integrityCheck());
}

/** Numbered test reports: a marker found in the file's bytes (to damage its page), then padding. */
export const rowMarker = (n: number) => `row-${String(n).padStart(5, '0')}:`;
export const numberedPayload = (n: number) => `${rowMarker(n)}${'v'.repeat(30)}`;
export const numberOfPayload = (p: Buffer) => Number(p.toString().slice(4, 9));

/**
 * Reads every device to the end in steps of 50, acking as a forwarder would; the report numbers
 * delivered. Throws when a batch comes out of seq order.
 */
export function deliverNumbered(outbox: ReportOutbox, devices: readonly string[]): number[] {
  const delivered: number[] = [];
  for (const device of devices) {
    let after = 0;
    for (;;) {
      const batch = outbox.peek(device, 50, after);
      if (batch.length === 0) break;
      const seqs = batch.map((r) => r.seq);
      if (seqs.some((seq, i) => i > 0 && seq <= seqs[i - 1])) throw new Error(`${device}: seqs out of order: ${seqs.join(',')}`);
      delivered.push(...batch.map((r) => numberOfPayload(r.payload)));
      after = seqs[seqs.length - 1];
      outbox.ack(device, after);
    }
  }
  return delivered;
}
