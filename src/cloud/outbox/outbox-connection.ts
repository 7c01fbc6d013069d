// How every connection to the outbox file is set up, and how the file under it is recognised.
import { statSync } from 'node:fs';
import type { SqliteDatabase } from './sqlite-types.js';

/** The connection settings every connection to the file gets (a reopened one too). */
export function configure(db: SqliteDatabase, options: { synchronous: 'NORMAL' | 'FULL' }): void {
  // better-sqlite3's defaults, which libsql lacks: a 5 s wait for a lock held by another
  // connection (libsql: 0 ms) and a 16 MB page cache (libsql: 2 MB).
  db.pragma('busy_timeout = 5000');
  db.pragma('cache_size = -16000');
  // WAL: a commit appends frames and a reader never sees a half-written one; a kill at any
  // point leaves either the old or the new state (the WAL is replayed or ignored on open).
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${options.synchronous}`);
  // After a long replay the WAL is truncated back to this size instead of staying large.
  db.pragma('journal_size_limit = 4194304');
}

/** The file's identity (device and inode): a file replaced under the open connection is noticed. */
export function fileIdOf(path: string): string | undefined {
  if (path === ':memory:') return undefined;
  try {
    const stat = statSync(path);
    return `${stat.dev}:${stat.ino}`;
  } catch {
    return 'missing';
  }
}
