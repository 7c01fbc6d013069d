// A clock for queue tests: time moves only when the test advances it.
import { QueueClosedError } from '../../../src/cloud/errors.js';
import type { Clock } from '../../../src/cloud/rate-queue.js';

interface Sleeper {
  at: number;
  resolve: () => void;
}

export class ManualClock implements Clock {
  time = 1_000_000;
  private sleepers: Sleeper[] = [];

  now(): number {
    return this.time;
  }

  random(): number {
    return 0.5;
  }

  sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) {
        reject(new QueueClosedError());
        return;
      }
      const sleeper: Sleeper = { at: this.time + ms, resolve };
      this.sleepers.push(sleeper);
      signal.addEventListener('abort', () => {
        this.sleepers = this.sleepers.filter((s) => s !== sleeper);
        reject(new QueueClosedError());
      }, { once: true });
    });
  }

  get sleeping(): number {
    return this.sleepers.length;
  }

  advance(ms: number): void {
    this.time += ms;
    const due = this.sleepers.filter((s) => s.at <= this.time);
    this.sleepers = this.sleepers.filter((s) => s.at > this.time);
    for (const sleeper of due) sleeper.resolve();
  }
}
