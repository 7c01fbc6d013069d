// The typed subset of libsql's better-sqlite3-style API that the outbox uses. libsql declares every
// row as `unknown` and statements without a row type; these give each prepared statement its
// parameter and row shapes (BLOB columns arrive as ArrayBuffer, not Buffer).
export interface RunResult {
  changes: number;
  lastInsertRowid: number | bigint;
}

export interface Statement<Params extends unknown[], Row = unknown> {
  run(...params: Params): RunResult;
  get(...params: Params): Row | undefined;
  all(...params: Params): Row[];
}

export interface SqliteDatabase {
  prepare<Params extends unknown[] = unknown[], Row = unknown>(source: string): Statement<Params, Row>;
  exec(source: string): unknown;
  pragma(source: string): unknown;
  transaction<F extends (...args: never[]) => unknown>(fn: F): F;
  close(): unknown;
  /** True between BEGIN and COMMIT/ROLLBACK (SQLite may roll back by itself on disk full or I/O errors). */
  readonly inTransaction: boolean;
}
