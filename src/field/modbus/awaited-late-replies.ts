// The late replies an RTU line port still watches for (rtu-line-port.ts): one entry per timed-out
// request whose reply may still come, each with a deadline, the end of the bus's late-reply guard
// for it (late-guard.ts; the bus passes its length on, late-reply-watch.ts). Past its deadline an entry
// is gone: a frame that looks like its reply is then a foreign frame, discarded like any, never
// the "late reply" of a long-gone request (which would excuse, say, a busy answer to the request
// on the line and teach the guard an answer time nobody measured). Time is the injected clock's.
import { type AwaitedLateReply, sameReplyShape } from '../../core/modbus/late-frames.js';
import type { Clock } from '../../core/time.js';
import type { ReplyShape } from './transport-types.js';

/** An awaited late reply and until when (the port's clock, ms) it is watched for. */
export interface WatchedLateReply extends AwaitedLateReply {
  until: number;
}

export class AwaitedLateReplies {
  private entries: WatchedLateReply[] = [];
  /** Set aside while the identical request is on the line (beginExchange). */
  private aside: WatchedLateReply[] = [];

  constructor(private readonly clock: Clock) {}

  /** The replies still watched for now; expired ones are removed first. */
  current(): readonly WatchedLateReply[] {
    const now = this.clock.now();
    if (this.entries.some((e) => e.until <= now)) this.entries = this.entries.filter((e) => e.until > now);
    return this.entries;
  }

  /** A request timed out: its reply is watched for `watchMs` from now (replacing one of the same shape). */
  add(request: AwaitedLateReply, watchMs: number): void {
    this.entries = [...this.entries.filter((e) => !sameReplyShape(e, request)), { ...request, until: this.clock.now() + watchMs }];
  }

  /**
   * The bus guards the late reply of `unit`'s timed-out request of `shape` for `guardMs` from now
   * (its learned guard may be longer than the configured one): it is watched exactly as long.
   */
  watchFor(unit: number, shape: ReplyShape, guardMs: number): void {
    const entry = this.current().find((e) => sameReplyShape(e, { unit, ...shape }));
    if (entry) entry.until = this.clock.now() + guardMs;
  }

  /**
   * A request of this shape goes out: a frame of its shape is its reply. An awaited reply of
   * another address is given up (the bus sends such a request only once that guard has passed and
   * the timed-out request was answered again). One of the same address (the identical request
   * repeated: whichever copy's answer comes is a true reading) is set aside for the exchange and
   * watched for again after it (`restore`): the other copy's answer may still come.
   */
  beginExchange(request: Omit<AwaitedLateReply, 'sentAt'>): void {
    this.restore();
    const identical = (e: WatchedLateReply) => e.address !== undefined && e.address === request.address;
    this.aside = this.entries.filter((e) => sameReplyShape(e, request) && identical(e));
    this.entries = this.entries.filter((e) => !sameReplyShape(e, request));
  }

  /** The exchange ended: an awaited reply set aside for it is watched for again until its deadline. */
  restore(): void {
    const now = this.clock.now();
    for (const entry of this.aside) {
      if (entry.until > now && !this.entries.some((e) => sameReplyShape(e, entry))) this.entries.push(entry);
    }
    this.aside = [];
  }

  /** Its late reply came: nothing more of it is awaited. */
  remove(entry: AwaitedLateReply): void {
    this.entries = this.entries.filter((e) => e !== entry);
  }
}
