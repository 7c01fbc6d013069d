// Keeps one transport open: first open, reopen with capped exponential back-off + jitter when the
// port vanishes or the peer drops, forever, logging "bus down" / "bus up" once per transition, and
// once more for each new cause while it stays down (a port first missing, then refused).
import type { BackoffConfig } from '../../core/config/site-types.js';
import type { Logger } from '../../core/logger.js';
import { backoffDelay } from '../../core/backoff.js';
import type { Clock, Timers } from '../../core/time.js';
import type { ModbusTransport } from './transport.js';

/** 'reopening': closed on purpose and opening again at once; requests wait in the queue meanwhile. */
export type ConnectionState = 'idle' | 'starting' | 'up' | 'reopening' | 'down' | 'stopped';

export interface ConnectionEvents {
  /** The port is open (first time or again). */
  onUp(): void;
  /** The port is closed or could not be opened; called on every failed attempt. */
  onDown(reason: string): void;
}

/** Distinct causes logged in one down spell at most (a cause that embeds a counter cannot flood the log). */
const MAX_CAUSES_PER_SPELL = 8;

export class BusConnection {
  state: ConnectionState = 'idle';
  downReason = '';
  reconnects = 0;
  private downSince = 0;
  private attempt = 0;
  private connecting = false;
  /** Incremented by stop(): an open() that finishes afterwards is discarded. */
  private epoch = 0;
  private cancelReopen: (() => void) | undefined;
  /** The current down spell is a deliberate reopen, logged by the bus: "bus up" at debug only. */
  private quietReopen = false;
  /** The causes this down spell has logged: a new one is logged once, a repeated one never. */
  private readonly spellCauses = new Set<string>();

  constructor(
    private readonly transport: ModbusTransport,
    private readonly reconnect: BackoffConfig,
    private readonly events: ConnectionEvents,
    private readonly log: Logger,
    private readonly clock: Clock,
    private readonly timers: Timers,
    private readonly random: () => number,
  ) {
    transport.onClose((reason, outOfStep) => {
      if (this.state !== 'up') return;
      if (outOfStep) {
        this.log.warn({ target: this.transport.target, reason }, 'bus replies out of step, reconnecting');
        void this.reopen(reason, false);
      } else {
        this.lost(reason);
      }
    });
  }

  start(): void {
    if (this.state !== 'idle' && this.state !== 'stopped') return;
    this.state = 'starting';
    void this.open();
  }

  async stop(): Promise<void> {
    const wasActive = this.state !== 'idle' && this.state !== 'stopped';
    this.state = 'stopped';
    this.epoch += 1;
    this.cancelReopen?.();
    this.cancelReopen = undefined;
    if (wasActive) await this.transport.close();
  }

  /** A request found the port closed without a close event: treat as lost. */
  lost(reason: string): void {
    if (this.state === 'stopped') return;
    if (this.state !== 'down' || this.quietReopen) {
      this.quietReopen = false; // a deliberate reopen that failed is a real outage
      this.state = 'down';
      this.downReason = reason;
      this.downSince = this.clock.now();
      this.spellCauses.clear();
      this.spellCauses.add(reason);
      this.log.warn({ target: this.transport.target, reason }, 'bus down');
    } else if (!this.spellCauses.has(reason) && this.spellCauses.size < MAX_CAUSES_PER_SPELL) {
      // Still down, for another reason (the adapter is back but the port is refused): the
      // cause the log shows must be the one that holds now.
      this.spellCauses.add(reason);
      this.downReason = reason;
      this.log.warn({ target: this.transport.target, reason, downForMs: this.clock.now() - this.downSince }, 'bus still down, cause changed');
    } else {
      this.downReason = reason;
      this.log.debug({ reason, attempt: this.attempt }, 'bus reopen failed');
    }
    this.events.onDown(reason);
    if (this.cancelReopen || this.connecting) return;
    const delay = backoffDelay(this.reconnect, this.attempt, this.random);
    this.attempt += 1;
    this.cancelReopen = this.timers.setTimer(() => {
      this.cancelReopen = undefined;
      void this.open();
    }, delay);
  }

  /**
   * The port is open but useless (no good reply for too long, or replies out of step): close it
   * (unless it already is) and open it again now. Queued requests wait; if the open fails, the
   * bus is down as usual and they fail then.
   */
  async reopen(reason: string, close = true): Promise<void> {
    if (this.state !== 'up' || this.connecting) return;
    this.state = 'reopening';
    this.downReason = reason;
    this.downSince = this.clock.now();
    this.quietReopen = true;
    const epoch = this.epoch;
    this.connecting = true;
    if (close) await this.transport.close();
    this.connecting = false;
    if (epoch === this.epoch && this.state === 'reopening') await this.open();
  }

  private async open(): Promise<void> {
    const epoch = this.epoch;
    this.connecting = true;
    try {
      await this.transport.open();
    } catch (err) {
      this.connecting = false;
      if (epoch === this.epoch) this.lost(err instanceof Error ? err.message : String(err));
      return;
    }
    this.connecting = false;
    if (epoch !== this.epoch) {
      await this.transport.close();
      return;
    }
    const wasDown = this.state === 'down' || this.state === 'reopening';
    this.state = 'up';
    this.attempt = 0;
    const quiet = this.quietReopen;
    this.quietReopen = false;
    if (wasDown) {
      this.reconnects += 1;
      this.log[quiet ? 'debug' : 'info']({ target: this.transport.target, downForMs: this.clock.now() - this.downSince }, 'bus up');
    } else {
      this.log.info({ target: this.transport.target }, 'bus open');
    }
    this.events.onUp();
  }
}
