// The outbox file's row shapes and store settings, shared by the store, its salvage, start-up
// and attach (a module of types only: none of them imports another for its shapes).

export interface StoredRow {
  seq: number;
  device: string;
  ts: number;
  payload: Buffer;
  /** The row's checksum as stored (null: a row from before checksums); computed when absent. */
  crc?: number | null;
}

export interface DeviceTotals {
  device: string;
  depth: number;
  bytes: number;
}

export interface StoreOptions {
  /** FULL syncs the WAL at every commit (power-cut durable); NORMAL only at checkpoints. */
  synchronous: 'NORMAL' | 'FULL';
  /**
   * Bytes each row counts beyond its payload in every size this store reports: an in-memory store
   * standing in for the file holds its rows in memory, where a report costs more than its payload.
   */
  rowOverheadBytes?: number;
}
