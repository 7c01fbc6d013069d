// Answer times for the commissioning commands (`read`, `scan`), so the integrator can choose a
// timeoutMs above the slowest unit: how long a reply took, and on RTU framing how late a reply
// came that missed its timeout (the transport recognises it by unit, function, length and CRC).
import type { ModbusTransport } from '../field/modbus/transport.js';

/** How long `read` keeps listening for a reply that missed its timeout: 10 timeouts, at most 5 s. */
export function lateListenMs(timeoutMs: number): number {
  return Math.min(10 * timeoutMs, 5_000);
}

/** Runs `call` and measures its answer time (ms, wall clock). */
export async function timed<T>(call: () => Promise<T>): Promise<{ value: T; answerMs: number }> {
  const started = performance.now();
  const value = await call();
  return { value, answerMs: Math.round(performance.now() - started) };
}

/** Records the late replies a transport recognises, per unit (answer time from the request, ms). */
export class LateReplies {
  private readonly seen = new Map<number, number>();
  private readonly waiters: Array<() => void> = [];

  constructor(transport: ModbusTransport) {
    transport.onLateReply?.((unit, answeredAfterMs) => {
      this.seen.set(unit, Math.round(answeredAfterMs));
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  get units(): ReadonlyMap<number, number> {
    return this.seen;
  }

  /** The late reply of `unit` within `withinMs`, or undefined. */
  async waitFor(unit: number, withinMs: number): Promise<number | undefined> {
    const deadline = performance.now() + withinMs;
    while (!this.seen.has(unit)) {
      const left = deadline - performance.now();
      if (left <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.seen.get(unit);
  }
}

export function lateReplyHint(unit: number, answeredAfterMs: number, timeoutMs: number): string {
  return `unit ${unit} answered ${answeredAfterMs} ms after the request, after the ${timeoutMs} ms timeout: set --timeout (timeoutMs) above it`;
}
