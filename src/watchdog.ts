// Which loops stopped making progress (pure but for the counters it reads): feeds the systemd
// watchdog and /healthz. A loop is stalled when its counter has not moved for longer than expected.
export interface LoopProgress {
  name: string;
  counter: number;
  expectedWithinMs: number;
}

export class ProgressWatch {
  private readonly last = new Map<string, { counter: number; changedAt: number }>();

  constructor(private readonly read: () => LoopProgress[]) {}

  stalled(now: number): string[] {
    const stalled: string[] = [];
    for (const loop of this.read()) {
      const seen = this.last.get(loop.name);
      if (!seen || seen.counter !== loop.counter) {
        this.last.set(loop.name, { counter: loop.counter, changedAt: now });
      } else if (now - seen.changedAt > loop.expectedWithinMs) {
        stalled.push(loop.name);
      }
    }
    return stalled;
  }
}
