// Counts what an RTU-framed stream received against what modbus-serial handed over as frames.
// While it waits for a reply the library scans its buffer for the awaited unit and function and
// silently drops whatever lies before a match (a late or foreign frame); between exchanges it even
// consumes a late frame that matches the last request. The tally makes those bytes visible, so
// such an exchange is discarded as ambiguous and every stray frame is counted.
// It also watches for the late replies of timed-out requests (their units are not asked again
// until the reply was seen or its guard ran out): such a frame is reported and excused, so the
// exchange of another unit it landed in keeps its own, unambiguous reply.
import { EventEmitter } from 'node:events';
import { libraryPortOf, takeUnmatchedInput } from './library-errors.js';
import { type AwaitedLateReply, findLateFrames } from '../../core/modbus/late-frames.js';
import type { Clock } from '../../core/time.js';

/** Received bytes kept for the late-reply scan: a few of the longest RTU frames (256 bytes). */
const CAPTURE_LIMIT = 2048;

export type LateReplyListener = (unit: number, answeredAfterMs: number) => void;

export class RtuReceiveTally {
  private received = 0;
  private framed = 0;
  /** Bytes that arrived while no exchange was running. */
  private between = 0;
  private active = false;
  /** Late frames found while an exchange ran, and between exchanges (bytes). */
  private lateDuring = 0;
  private lateBetween = 0;
  private readonly awaited = new Map<number, AwaitedLateReply>();
  /** Bytes received since the last exchange began, late frames already found cut out. */
  private capture = Buffer.alloc(0);

  private constructor(port: EventEmitter, stream: EventEmitter, private readonly clock: Clock, private readonly onLate: LateReplyListener) {
    stream.on('data', (chunk: unknown) => {
      if (!Buffer.isBuffer(chunk)) return;
      if (this.active) this.received += chunk.length;
      else this.between += chunk.length;
      if (this.awaited.size > 0) this.scan(chunk);
    });
    port.on('data', (frame: unknown) => { if (Buffer.isBuffer(frame) && this.active) this.framed += frame.length; });
  }

  /** Undefined when the client's port is not the buffered RTU or telnet port this relies on. */
  static install(client: object, clock: Clock, onLate: LateReplyListener): RtuReceiveTally | undefined {
    const port = libraryPortOf(client);
    const stream: unknown = port instanceof EventEmitter ? Reflect.get(port, '_client') : undefined;
    if (!(port instanceof EventEmitter) || !(stream instanceof EventEmitter)) return undefined;
    return new RtuReceiveTally(port, stream, clock, onLate);
  }

  /** A request timed out: its reply may still come (the bus does not ask its unit meanwhile). */
  awaitLate(request: AwaitedLateReply): void {
    this.awaited.set(request.unit, request);
    this.scan(Buffer.alloc(0)); // it may already be complete in what was received
  }

  /** Units whose late reply is still awaited. */
  get awaitedUnits(): number[] {
    return [...this.awaited.keys()];
  }

  private scan(chunk: Buffer): void {
    this.capture = Buffer.concat([this.capture, chunk]);
    if (this.capture.length > CAPTURE_LIMIT) this.capture = this.capture.subarray(this.capture.length - CAPTURE_LIMIT);
    const frames = findLateFrames(this.capture, [...this.awaited.values()]);
    if (frames.length === 0) return;
    const now = this.clock.now();
    const kept: Buffer[] = [];
    let from = 0;
    for (const frame of frames) {
      kept.push(this.capture.subarray(from, frame.offset));
      from = frame.offset + frame.length;
      if (this.active) this.lateDuring += frame.length;
      else this.lateBetween += frame.length;
      const request = this.awaited.get(frame.unit);
      this.awaited.delete(frame.unit);
      if (request) this.onLate(frame.unit, now - request.sentAt);
    }
    kept.push(this.capture.subarray(from));
    this.capture = Buffer.concat(kept);
  }

  /**
   * Starts an exchange with `unit`: flushes the receive buffer and returns the stray bytes since the
   * last exchange ended (still buffered, or consumed by the library as a frame nobody awaited),
   * late replies found among them not included. From now on a frame of `unit` is its reply.
   */
  begin(client: object, unit: number): number {
    const buffered = takeUnmatchedInput(client);
    const strays = Math.max(0, Math.max(buffered, this.between) - this.lateBetween);
    this.awaited.delete(unit);
    this.capture = Buffer.alloc(0);
    this.received = 0;
    this.framed = 0;
    this.between = 0;
    this.lateDuring = 0;
    this.lateBetween = 0;
    this.active = true;
    return strays;
  }

  /**
   * Called after the quiet window that follows a reply: why the exchange is ambiguous, if it is.
   * Bytes after the reply (a duplicate or foreign frame) or bytes the library skipped before it;
   * a late reply of another unit that timed out is no ambiguity (it cannot be this unit's reply).
   */
  ambiguity(client: object): string | undefined {
    const extra = takeUnmatchedInput(client);
    const unexplained = this.received - this.framed - this.lateDuring;
    if (unexplained <= 0) return undefined;
    if (extra > this.lateDuring) return `${extra - this.lateDuring} bytes after the reply (duplicate or foreign frame)`;
    return `${unexplained} bytes before the reply (late or foreign frame)`;
  }

  /** Ends the exchange: from now on every byte is a stray. */
  end(): void {
    this.active = false;
  }
}
