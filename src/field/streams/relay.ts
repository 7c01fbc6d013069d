// Custom data stream relay: bytes from the cloud (`data/<identifier>/set`) go to the target; bytes
// from the target are grouped into messages by line silence and published on `data/<identifier>`.
import type { StreamConfig } from '../../core/config/command-types.js';
import type { BackoffConfig } from '../../core/config/site-types.js';
import type { Logger } from '../../core/logger.js';
import { backoffDelay } from '../../core/backoff.js';
import { afterPendingIo, type Timers } from '../../core/time.js';
import type { ByteEndpoint } from './endpoint.js';

export type PublishStream = (identifier: string, data: Buffer) => Promise<void>;

export interface StreamRelayOptions {
  config: StreamConfig;
  endpoint: ByteEndpoint;
  publish: PublishStream;
  logger: Logger;
  timers: Timers;
  reconnect: BackoffConfig;
  random?: () => number;
}

export class StreamRelay {
  private up = false;
  private stopped = true;
  private attempt = 0;
  private cancelReopen: (() => void) | undefined;
  private cancelQuiet: (() => void) | undefined;
  private cancelMaxAge: (() => void) | undefined;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  readonly counters = { sent: 0, received: 0, published: 0, dropped: 0 };

  constructor(private readonly options: StreamRelayOptions) {
    options.endpoint.onData((chunk) => this.collect(chunk));
    options.endpoint.onClose((reason) => {
      this.up = false;
      this.options.logger.warn({ stream: this.options.config.identifier, target: this.options.endpoint.target, reason }, 'stream target down');
      this.scheduleOpen();
    });
  }

  get isUp(): boolean {
    return this.up;
  }

  start(): void {
    this.stopped = false;
    void this.open();
  }

  /** Writes cloud bytes to the target; rejects (with a reason) when it is down. */
  async send(data: Buffer): Promise<void> {
    if (!this.up) throw new Error(`stream ${this.options.config.identifier}: target ${this.options.endpoint.target} is down`);
    await this.options.endpoint.write(data);
    this.counters.sent += data.length;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelReopen?.();
    this.flush();
    this.up = false;
    await this.options.endpoint.close();
  }

  private async open(): Promise<void> {
    if (this.stopped) return;
    try {
      await this.options.endpoint.open();
      if (this.stopped) return void (await this.options.endpoint.close());
      this.up = true;
      this.attempt = 0;
      this.options.logger.info({ stream: this.options.config.identifier, target: this.options.endpoint.target }, 'stream target up');
    } catch (err) {
      if (this.attempt === 0) {
        this.options.logger.warn({ stream: this.options.config.identifier, target: this.options.endpoint.target, err }, 'stream target unavailable');
      }
      this.scheduleOpen();
    }
  }

  private scheduleOpen(): void {
    if (this.stopped) return;
    const delay = backoffDelay(this.options.reconnect, this.attempt, this.options.random ?? Math.random);
    this.attempt += 1;
    this.cancelReopen = this.options.timers.setTimer(() => void this.open(), delay);
  }

  private collect(chunk: Buffer): void {
    const { config, endpoint, timers } = this.options;
    this.counters.received += chunk.length;
    if (this.pendingBytes === 0 && !endpoint.deliversWholeReplies) {
      // A talker that never pauses still gets its bytes published every replyTimeoutMs.
      this.cancelMaxAge = timers.setTimer(() => this.flush(), config.replyTimeoutMs);
    }
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    this.cancelQuiet?.();
    // A message ends when the line goes quiet, or when it reaches the size cap.
    if (this.pendingBytes >= config.maxReplyBytes || endpoint.deliversWholeReplies) this.flush();
    else this.cancelQuiet = timers.setTimer(() => {
      // Quiet once what already waits has been read (a stalled loop runs its timers first).
      this.cancelQuiet = afterPendingIo(() => this.flush());
    }, config.quietMs);
  }

  private flush(): void {
    this.cancelQuiet?.();
    this.cancelQuiet = undefined;
    this.cancelMaxAge?.();
    this.cancelMaxAge = undefined;
    if (this.pendingBytes === 0) return;
    const message = Buffer.concat(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    const { identifier } = this.options.config;
    this.options.publish(identifier, message).then(
      () => (this.counters.published += 1),
      (err: unknown) => {
        this.counters.dropped += 1;
        this.options.logger.warn({ stream: identifier, bytes: message.length, err }, 'stream data not published');
      },
    );
  }
}
