// The one write path of a device, whoever writes: pushes and commands (whichever link or session
// brought them), interface-B syncs and the commissioning page. Each write of a point carries the
// stamp its origin took when it was decided (a message received, a sync's read sent, a page
// request), from one counter per device that outlives links, sessions and reloads; the device's
// writes reach the bus one at a time, in the order asked, and a write whose point already took a
// later-stamped one, or has one queued behind it, is dropped before the bus (latest wins).
import type { Logger } from '../core/logger.js';
import { DeviceReplacedError } from './device-io.js';

/** What became of one write: taken to the bus, or dropped for a later write of the same point. */
export type WriteOutcome = 'written' | 'superseded';

export interface WriteSequencerCounters {
  /** Writes that reached the bus (succeeded or failed there). */
  written: number;
  /** Writes dropped because a later-stamped write of the point had already been taken to the bus. */
  superseded: number;
  /** Writes dropped because a later-stamped write of the point waited behind them. */
  coalesced: number;
  /** Synced values dropped because a write of the point was queued or on the bus. */
  yielded: number;
  /** Writes that reached the bus and were not a sync's (pushes, commands, the page): news the cloud's stored values lack until reported. */
  notSynced: number;
}

interface Queued {
  point: string;
  stamp: number;
  yields: boolean;
}

export interface WriteOptions {
  /**
   * The value is the cloud's stored one (an interface-B sync), which lags what the device was
   * sent: it gives way to any write of the point already queued or on the bus, and drops none.
   */
  yields?: boolean;
}

export class WriteSequencer {
  readonly counters: WriteSequencerCounters = { written: 0, superseded: 0, coalesced: 0, yielded: 0, notSynced: 0 };
  private lastStamp = 0;
  /** Point id -> stamp of the latest write taken to the bus. */
  private readonly landed = new Map<string, number>();
  /** Writes waiting for their turn, in order. */
  private readonly queued: Queued[] = [];
  private tail: Promise<unknown> = Promise.resolve();
  /** The point whose write is on the bus now. */
  private writing: string | undefined;

  constructor(readonly device: string, private readonly log?: Logger) {}

  /** A new stamp: later than every one taken before for this device. */
  stamp(): number {
    this.lastStamp += 1;
    return this.lastStamp;
  }

  /**
   * Runs `run` (the bus write of `point`) once every write of the device asked before it has
   * finished, unless a write of the point stamped later than `stamp` was taken first or waits
   * behind it. Writes of one origin share a stamp and never drop each other. Registered at the
   * call (no await before): the order of calls is the order on the bus.
   */
  write(point: string, stamp: number, run: () => Promise<void>, options: WriteOptions = {}): Promise<WriteOutcome> {
    const yields = options.yields === true;
    if (this.supersededNow(point, stamp) || (yields && this.givesWay(point, stamp))) return Promise.resolve('superseded');
    const entry: Queued = { point, stamp, yields };
    this.queued.push(entry);
    const turn = this.tail.then(async (): Promise<WriteOutcome> => {
      this.queued.splice(this.queued.indexOf(entry), 1);
      if (this.supersededNow(point, stamp) || (yields && this.givesWay(point, stamp))) return 'superseded';
      if (this.queued.some((q) => q.point === point && q.stamp > stamp && !q.yields)) {
        this.counters.coalesced += 1;
        this.log?.debug({ device: this.device, point, stamp }, 'write coalesced into a later one of the same point');
        return 'superseded';
      }
      this.writing = point;
      try {
        await run();
      } catch (err) {
        // A fenced path (its device replaced) never reached the bus: its run again will.
        if (!(err instanceof DeviceReplacedError)) this.took(point, stamp, yields);
        throw err;
      } finally {
        this.writing = undefined;
      }
      this.took(point, stamp, yields);
      return 'written';
    });
    this.tail = turn.catch(() => undefined);
    return turn;
  }

  private supersededNow(point: string, stamp: number): boolean {
    if ((this.landed.get(point) ?? 0) <= stamp) return false;
    this.counters.superseded += 1;
    this.log?.debug({ device: this.device, point, stamp, landed: this.landed.get(point) }, 'write dropped: a later one of the same point came first');
    return true;
  }

  /** A synced value meets a write of its point queued or on the bus (not one of its own origin). */
  private givesWay(point: string, stamp: number): boolean {
    const busy = this.writing === point || this.queued.some((q) => q.point === point && q.stamp !== stamp && !q.yields);
    if (!busy) return false;
    this.counters.yielded += 1;
    this.log?.debug({ device: this.device, point, stamp }, 'synced value gives way to a write of the same point');
    return true;
  }

  private took(point: string, stamp: number, synced: boolean): void {
    this.counters.written += 1;
    if (!synced) this.counters.notSynced += 1;
    this.landed.set(point, Math.max(this.landed.get(point) ?? 0, stamp));
  }
}

/** One sequencer per device name, kept while the device is in the site (its replacements share it). */
export class WriteSequencers {
  private readonly byDevice = new Map<string, WriteSequencer>();

  constructor(private readonly log?: Logger) {}

  of(device: string): WriteSequencer {
    let sequencer = this.byDevice.get(device);
    if (!sequencer) {
      sequencer = new WriteSequencer(device, this.log);
      this.byDevice.set(device, sequencer);
    }
    return sequencer;
  }

  /** The device left the site (not replaced). */
  forget(device: string): void {
    this.byDevice.delete(device);
  }

  counters(device: string): WriteSequencerCounters | undefined {
    return this.byDevice.get(device)?.counters;
  }
}
