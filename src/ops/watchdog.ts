// Which loops stopped making progress (pure but for the counters it reads): feeds the systemd
// watchdog and /healthz. A loop is stalled when its counter has not moved for longer than expected.
/** What every loop gets beyond its own expected time before it counts as stalled (the site's gateway.health.watchdogSlackMs). */
export const DEFAULT_WATCHDOG_SLACK_MS = 30_000;

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
    const present = new Set<string>();
    for (const loop of this.read()) {
      present.add(loop.name);
      const seen = this.last.get(loop.name);
      if (!seen || seen.counter !== loop.counter) {
        this.last.set(loop.name, { counter: loop.counter, changedAt: now });
      } else if (now - seen.changedAt > loop.expectedWithinMs) {
        stalled.push(loop.name);
      }
    }
    // A loop with nothing to do is not listed; when it has work again its clock starts afresh.
    for (const name of this.last.keys()) if (!present.has(name)) this.last.delete(name);
    return stalled;
  }
}

export interface LinkActivity {
  device: string;
  up: boolean;
  /** Reports of this device waiting in the outbox. */
  backlog: number;
  /** Reports acknowledged by the broker so far. */
  acked: number;
}

/**
 * Links expected to move: up, with reports waiting. A dead TCP connection is noticed by the MQTT
 * keepalive within 1.5 keepalives (the link goes down, which is not a stall); a link that stays
 * up with a backlog and no PUBACK for longer is wedged, and a restart is what helps.
 */
export function linkProgress(links: readonly LinkActivity[], keepaliveS: number, slackMs = DEFAULT_WATCHDOG_SLACK_MS): LoopProgress[] {
  const expectedWithinMs = 2 * keepaliveS * 1000 + slackMs;
  return links.filter((l) => l.up && l.backlog > 0).map((l) => ({ name: `link ${l.device}`, counter: l.acked, expectedWithinMs }));
}

export interface BusActivity {
  bus: string;
  /** Replies that matched their request (values or Modbus exceptions). */
  goodReplies: number;
  /** Up, requests failing since the last good reply, and not every unit in cool-down. */
  expected: boolean;
}

/**
 * Buses expected to move: a bus whose requests fail counts as progressing only by good replies,
 * never by timed-out cycles. It is not listed while idle, down (it reopens by itself) or while
 * every unit on it is legitimately in cool-down. One that stays unlisted-worthy for longer than
 * twice its own reopen-after-silence plus slack is wedged beyond what a reopen cures.
 */
export function busProgress(buses: readonly BusActivity[], reopenAfterSilenceMs: (bus: string) => number, slackMs = DEFAULT_WATCHDOG_SLACK_MS): LoopProgress[] {
  return buses.filter((b) => b.expected).map((b) => ({
    name: `bus ${b.bus}`, counter: b.goodReplies, expectedWithinMs: 2 * reopenAfterSilenceMs(b.bus) + slackMs,
  }));
}
