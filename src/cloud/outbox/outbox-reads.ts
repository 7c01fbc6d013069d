// Disk reads of both outbox modes. A read that fails is never skipped over: the device is served
// nothing newer (its order is its disk rows first), the read is retried with backoff (the device's
// forwarder is woken to peek again), and the failing state is reported once each way. Disk rows
// are counted as acknowledged only up to the highest seq a peek actually returned.
import type { OutboxReadState, OutboxRecord } from '../../core/outbox-types.js';
import type { Time } from '../../core/time.js';
import { storageCause } from './outbox-storage.js';
import type { StoreKeeper } from './outbox-file.js';

/** The longest wait between two read attempts, however long the episode lasts. */
export const MAX_READ_RETRY_MS = 30_000;

export interface ReadHooks {
  /** Devices whose peek failed, to be woken when a read is worth trying again. */
  wake?: (devices: ReadonlySet<string>) => void;
  /** Before each retry: the outbox replaces a file found corrupt (and recounts) before reading again. */
  beforeRetry?: () => void;
  /** Reads started or stopped failing (once per transition). */
  onReads?: (state: OutboxReadState) => void;
}

export class DiskReads {
  private failing: { cause: string; since: number } | undefined;
  private failedReads = 0;
  private delayMs: number;
  private cancelTimer: (() => void) | undefined;
  private readonly waiting = new Set<string>();
  /** Per device, the highest seq a peek returned (disk rows beyond it were never read). */
  private readonly served = new Map<string, number>();
  private closed = false;

  constructor(private readonly file: StoreKeeper, private readonly time: Time, private readonly baseDelayMs: number, private readonly hooks: ReadHooks) {
    this.delayMs = baseDelayMs;
  }

  /** A device's disk rows after afterSeq; undefined when the read failed (serve nothing newer). */
  after(device: string, afterSeq: number, limit: number): OutboxRecord[] | undefined {
    try {
      const rows = this.file.store.after(device, afterSeq, limit);
      this.succeeded();
      return rows;
    } catch (err) {
      this.failed(err, device);
      return undefined;
    }
  }

  /** Remembers what a peek handed out, so an ack never counts disk rows it did not see. */
  handedOut(device: string, records: readonly OutboxRecord[]): void {
    const last = records.at(-1)?.seq;
    if (last !== undefined && last > (this.served.get(device) ?? 0)) this.served.set(device, last);
  }

  /** The seq up to which disk rows may be counted acknowledged for an ack up to `upToSeq`. */
  ackable(device: string, upToSeq: number): number {
    return Math.min(upToSeq, this.served.get(device) ?? 0);
  }

  /** A read (count, oldest time) that failed: reported, the caller keeps its counters as they are. */
  read<T>(work: () => T): T | undefined {
    try {
      return work();
    } catch (err) {
      this.failed(err);
      return undefined;
    }
  }

  state(): OutboxReadState {
    const base = { failedReads: this.failedReads };
    return this.failing ? { ...base, state: 'failing', cause: this.failing.cause, since: this.failing.since } : { ...base, state: 'ok' };
  }

  close(): void {
    this.closed = true;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
  }

  private failed(err: unknown, device?: string): void {
    this.failedReads += 1;
    // Told apart later (StoreKeeper.check): an I/O error that SQLite reports as corruption.
    this.file.suspect(err);
    if (!this.failing) {
      this.failing = { cause: storageCause(err), since: this.time.now() };
      this.hooks.onReads?.(this.state());
    }
    if (device !== undefined) this.waiting.add(device);
    this.arm();
  }

  private succeeded(): void {
    this.delayMs = this.baseDelayMs;
    if (!this.failing) return;
    this.failing = undefined;
    this.hooks.onReads?.(this.state());
  }

  /** One timer for every waiting device; each failed attempt doubles the wait up to MAX_READ_RETRY_MS. */
  private arm(): void {
    if (this.closed || this.cancelTimer !== undefined) return;
    const delay = this.delayMs;
    this.delayMs = Math.min(MAX_READ_RETRY_MS, this.delayMs * 2);
    this.cancelTimer = this.time.setTimer(() => {
      this.cancelTimer = undefined;
      if (this.closed) return;
      this.hooks.beforeRetry?.();
      const devices = new Set(this.waiting);
      this.waiting.clear();
      if (devices.size > 0) this.hooks.wake?.(devices);
    }, delay, { unref: true });
  }
}
