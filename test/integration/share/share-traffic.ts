// Traffic around a share under attack: a poll loop that keeps what each refused poll was refused
// with (a QueueFullError means the share crowded the polls out), and MBAP answers cut apart.
import type { Bus } from '../../../src/field/modbus/bus.js';

export interface Poller {
  ok: number;
  /** The error class of every poll that failed, in order. */
  readonly errors: string[];
  stop(): Promise<void>;
}

/** Polls `unit`'s holding 0..9 back to back (a poller whose device is always due). */
export function startPoller(bus: Bus, unit: number): Poller {
  let running = true;
  const poller: Poller = { ok: 0, errors: [], stop: async () => { running = false; await loop; } };
  const loop = (async () => {
    while (running) {
      await bus.read(unit, 'holding', 0, 10).then(
        () => { poller.ok += 1; },
        (err: unknown) => { poller.errors.push(err instanceof Error ? err.name : String(err)); },
      );
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  return poller;
}

/** The complete MBAP frames in `bytes`. */
export function splitAnswers(bytes: Buffer): Buffer[] {
  const frames: Buffer[] = [];
  let at = 0;
  while (at + 6 <= bytes.length) {
    const end = at + 6 + bytes.readUInt16BE(at + 4);
    if (end > bytes.length) break;
    frames.push(bytes.subarray(at, end));
    at = end;
  }
  return frames;
}
