// One timer for a bus's queue: requests left waiting for a guarded or cooling unit are looked at
// again when the earliest of them may go or must fail. A later instant never replaces an earlier one.
import type { Clock, Timers } from '../../core/time.js';

export class WakeTimer {
  private wake: { at: number; cancel: () => void } | undefined;

  constructor(private readonly clock: Clock, private readonly timers: Timers, private readonly onWake: () => void) {}

  /** Wakes at `at` (epoch ms) unless an earlier wake is already set; undefined: nothing to wait for. */
  at(at: number | undefined): void {
    if (at === undefined || (this.wake && this.wake.at <= at)) return;
    this.wake?.cancel();
    const cancel = this.timers.setTimer(() => {
      this.wake = undefined;
      this.onWake();
    }, Math.max(0, at - this.clock.now()));
    this.wake = { at, cancel };
  }

  cancel(): void {
    this.wake?.cancel();
    this.wake = undefined;
  }
}
