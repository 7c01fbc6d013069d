// The late replies an RTU line port still watches for (rtu-line-port.ts): one entry per timed-out
// request whose reply may still come, each with a deadline, the end of the bus's late-reply guard
// for it (late-guard.ts; the bus passes its length on, slow-units.ts). Past its deadline an entry
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

  /** A request of this shape goes out: its reply is no late one (the bus sends it only once that guard has passed). */
  dropShape(request: Omit<AwaitedLateReply, 'sentAt'>): void {
    this.entries = this.entries.filter((e) => !sameReplyShape(e, request));
  }

  /** Its late reply came: nothing more of it is awaited. */
  remove(entry: AwaitedLateReply): void {
    this.entries = this.entries.filter((e) => e !== entry);
  }
}
