// The checksum stored in each outbox row (pure): CRC-32 over the payload and its sample time.
import { crc32 } from 'node:zlib';
import type { OutboxRecord } from '../../core/outbox-types.js';

/** A row read back with the checksum it was stored with (null for rows written before checksums). */
export interface CheckedRecord extends OutboxRecord {
  crc: number | null;
}

/** CRC-32 of a record's payload and sample time, stored in its row and checked before publishing. */
export function recordChecksum(payload: Buffer, ts: number): number {
  const time = Buffer.alloc(8);
  time.writeDoubleLE(ts);
  return crc32(time, crc32(payload));
}

/** True for a row without a checksum (written before they existed) or one whose checksum matches. */
export function intact(record: CheckedRecord): boolean {
  return record.crc === null || record.crc === recordChecksum(record.payload, record.ts);
}

