// One RTU line (a serial port, or one TCP connection carrying RTU frames): assemble requests,
// let the simulator answer, and send replies in order, optionally paced like a real line.
import { type Logger, encodeRtuFrame } from 'fieldgate/workspace-kit';
import { corruptCrc } from './frames.js';
import { PreciseQueue, hrtimeMicros, type MicroClock } from './precise-queue.js';
import { RtuAssembler, type AssembledFrame } from './rtu-assembler.js';
import type { Simulator } from './simulator.js';
import type { LineTiming } from './timing.js';

export interface RtuSessionOptions {
  simulator: Simulator;
  /** Sends bytes on the line; must not throw. */
  write: (frame: Buffer) => void;
  logger: Logger;
  /** Line settings; with `baudAccurate` replies wait for the wire time they would take. */
  timing?: LineTiming;
  baudAccurate?: boolean;
  /** The line returns every byte the master sends before the reply (an RS-485 adapter's local echo). */
  echo?: boolean;
  /**
   * Like a strict device, ignore a request that begins less than t3.5 after the previous frame on
   * the line (counted in the simulator's line counters). Needs baud-accurate mode.
   */
  strict?: boolean;
  /** Silence that ends an unknown-length frame / drops a partial one (default max(t3.5, 20 ms)). */
  silenceMs?: number;
  /** Shared by sessions that model one physical line (several TCP clients of one serial server). */
  line?: LineState;
  clock?: MicroClock;
  /** Where delayed replies wait (default a PreciseQueue); tests pass a recording fake. */
  scheduler?: ReplyScheduler;
}

export interface ReplyScheduler {
  readonly pending: number;
  push(atMicros: number, run: () => void): void;
  close(): void;
}

export interface LineState {
  /** Baud-accurate mode: the simulated line carries a frame or its trailing silence until then (µs). */
  busyUntilMicros: number;
}

/** Beyond this many replies waiting to be sent, new requests are ignored (bounded memory). */
const MAX_PENDING_REPLIES = 256;
const DEFAULT_SILENCE_MS = 20;

export class RtuSession {
  private readonly assembler: RtuAssembler;
  private readonly queue: ReplyScheduler;
  private readonly silenceMs: number;
  private readonly clock: MicroClock;
  private silenceTimer: NodeJS.Timeout | undefined;
  private readonly line: LineState;
  private closed = false;

  constructor(private readonly options: RtuSessionOptions) {
    if (options.baudAccurate === true && options.timing === undefined) throw new Error('baud-accurate mode needs line timing');
    if (options.strict === true && options.baudAccurate !== true) throw new Error('strict timing needs baud-accurate mode');
    this.clock = options.clock ?? hrtimeMicros;
    this.line = options.line ?? { busyUntilMicros: 0 };
    const t35Ms = (options.timing?.t35Micros ?? 0) / 1000;
    this.silenceMs = options.silenceMs ?? Math.max(DEFAULT_SILENCE_MS, t35Ms);
    this.assembler = new RtuAssembler(this.silenceMs * 1000);
    this.queue = options.scheduler ?? new PreciseQueue(this.clock, (err) => options.logger.error({ err }, 'reply send failed'));
  }

  /** Bytes received from the line. */
  feed(chunk: Buffer): void {
    if (this.closed) return;
    const now = this.clock();
    if (this.options.echo === true) this.options.write(chunk);
    this.clearSilenceTimer();
    for (const frame of this.assembler.push(chunk, now)) this.process(frame, now);
    if (this.assembler.buffered > 0) {
      this.silenceTimer = setTimeout(() => this.onSilence(), Math.ceil(this.silenceMs));
    }
  }

  close(): void {
    this.closed = true;
    this.clearSilenceTimer();
    this.queue.close();
  }

  private onSilence(): void {
    this.silenceTimer = undefined;
    const now = this.clock();
    for (const frame of this.assembler.flush()) this.process(frame, now);
  }

  private clearSilenceTimer(): void {
    if (this.silenceTimer !== undefined) clearTimeout(this.silenceTimer);
    this.silenceTimer = undefined;
  }

  private process(frame: AssembledFrame, arrivedMicros: number): void {
    const { simulator, logger } = this.options;
    if (frame.kind === 'bad-frame') {
      simulator.line.badCrc += 1;
      logger.debug({ reason: frame.reason, bytes: frame.bytes }, 'frame ignored');
      this.occupyLine(arrivedMicros, frame.bytes);
      return;
    }
    if (this.options.baudAccurate === true && arrivedMicros < this.line.busyUntilMicros) {
      // Began less than t3.5 after the previous frame: counted; a strict device ignores it.
      simulator.line.earlyRequests += 1;
      if (this.options.strict === true) {
        logger.debug({ earlyByMicros: Math.round(this.line.busyUntilMicros - arrivedMicros) }, 'request before t3.5 ignored (strict)');
        this.occupyLine(arrivedMicros, frame.bytes);
        return;
      }
    }
    const outcome = simulator.handle(frame.unit, frame.pdu);
    if (outcome.kind === 'drop') {
      this.occupyLine(arrivedMicros, frame.bytes);
      return;
    }
    if (this.queue.pending >= MAX_PENDING_REPLIES) {
      logger.warn({ pending: this.queue.pending }, 'reply queue full, request ignored');
      return;
    }
    const encoded = encodeRtuFrame(frame.unit, outcome.pdu);
    const reply = outcome.garble ? corruptCrc(encoded) : encoded;
    const delayMicros = outcome.delayMs * 1000;
    if (this.options.baudAccurate === true && this.options.timing !== undefined) {
      const timing = this.options.timing;
      const start = Math.max(arrivedMicros, this.line.busyUntilMicros);
      const sendAt = start + timing.replyDoneMicros(frame.bytes, reply.length) + delayMicros;
      this.line.busyUntilMicros = sendAt + timing.t35Micros;
      this.queue.push(sendAt, () => this.send(reply));
    } else if (delayMicros === 0 && this.queue.pending === 0) {
      this.send(reply);
    } else {
      this.queue.push(arrivedMicros + delayMicros, () => this.send(reply));
    }
  }

  /** A request nobody answers still holds the line for its own wire time and silence. */
  private occupyLine(arrivedMicros: number, bytes: number): void {
    const timing = this.options.timing;
    if (this.options.baudAccurate !== true || timing === undefined) return;
    this.line.busyUntilMicros = Math.max(arrivedMicros, this.line.busyUntilMicros) + timing.frameMicros(bytes) + timing.t35Micros;
  }

  private send(reply: Buffer): void {
    if (!this.closed) this.options.write(reply);
  }
}
