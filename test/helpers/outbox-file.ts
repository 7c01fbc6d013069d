// An outbox file as another process sees it: its row count and SQLite's integrity check.
import { OutboxStore } from '../../src/cloud/outbox/outbox-store.js';

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
