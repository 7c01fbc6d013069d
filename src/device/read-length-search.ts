// What a device's read-plan learner knows about read lengths (pure: time passed in): the longest
// read served per table, the requests served whole, the last lesson, and the search for the exact
// length once a shorter one was learned. A
// lesson leaves a length known to work (`good`, what the plan uses) and one that timed out whole
// (`bad`); one read a cycle of the length halfway between them narrows that down, so a limit of 3
// ends as reads of 3, not of what halving gave. Once they are next to each other the first bad
// length is tried again after `reprobeMs` (doubling with each timeout, up to 16 times): served, the lesson was a false one (frames lost at
// random) or the device changed: the longest read that ever timed out is tried next, and served,
// the lesson is forgotten (else the search goes on below it).
import { isBitTable, type Table } from '../core/points/types.js';

/** A read sent only to learn whether the device serves `count` from `start` (whole or not at all). */
export interface LengthProbe {
  table: Table;
  start: number;
  count: number;
}

interface Search {
  /** Where the lesson's request began: every length up to `ceiling` from here was served as halves. */
  start: number;
  good: number;
  bad: number;
  /** The longest request that timed out whole: served, the table has no length limit after all. */
  ceiling: number;
  /** Monotonic: when the first bad length is tried again, once the search has ended. */
  reprobeAt: number;
  /** Re-probes of the first bad length that timed out in a row (each doubles the pause). */
  reprobes: number;
  /** The first bad length was served: the ceiling is the next probe. */
  ceilingNext: boolean;
}

/** The pause before a re-probe doubles at most this many times (16 x reprobeMs: 16 min at the default). */
const MAX_REPROBE_DOUBLINGS = 4;

/** What a served probe changed: the table's new length, or none at all (the lesson forgotten). */
export type ProbeServed = { kind: 'longer'; count: number } | { kind: 'forget' } | { kind: 'same' };

/** One read served or timed out: table, start and length (`key`: "table:start:count"). */
export interface ReadLength {
  table: Table;
  start: number;
  count: number;
}

const keyOf = (r: ReadLength) => `${r.table}:${r.start}:${r.count}`;

export class ReadLengths {
  private readonly searches = new Map<Table, Search>();
  /** Per table, the longest request the device served: a length known to work. */
  private readonly longest = new Map<Table, number>();
  /** Requests served whole: one of these timing out whole says the device changed. */
  private readonly servedWhole = new Set<string>();
  /** The last shorter length learned, and when (for the offline reason). */
  private lesson: { table: Table; count: number; at: number } | undefined;

  constructor(private readonly reprobeMs: () => number) {}

  /** `read` was served whole on the wire. */
  servedRead(read: ReadLength): void {
    this.servedWhole.add(keyOf(read));
    if (read.count > (this.longest.get(read.table) ?? 0)) this.longest.set(read.table, read.count);
  }

  /**
   * The longest read of `table` served, for a lesson from `timedOut`: none when `timedOut` itself
   * was served whole before (the device changed, a power cycle with a smaller limit, say).
   */
  longestServed(table: Table, timedOut?: ReadLength): number {
    if (timedOut && this.servedWhole.has(keyOf(timedOut))) {
      this.longest.delete(table);
      for (const key of this.servedWhole) if (key.startsWith(`${table}:`)) this.servedWhole.delete(key);
    }
    return this.longest.get(table) ?? 0;
  }

  /** A lesson for `table`: `good` is planned, `bad` (from `start`) timed out whole. */
  learned(table: Table, start: number, good: number, bad: number, now: number): void {
    const ceiling = Math.max(bad, this.searches.get(table)?.ceiling ?? 0);
    this.searches.set(table, { start, good, bad, ceiling, reprobeAt: now + this.reprobeMs(), reprobes: 0, ceilingNext: false });
    this.lesson = { table, count: good, at: now };
  }

  /** "reads longer than 4 registers time out", when a shorter length was learned at or after `since`. */
  lessonSince(since: number): string | undefined {
    const lesson = this.lesson;
    if (!lesson || lesson.at < since) return undefined;
    return `reads longer than ${lesson.count} ${isBitTable(lesson.table) ? 'bits' : 'registers'} time out`;
  }

  /** The probe due now, if any: halfway between good and bad, or the first bad length again. */
  next(now: number): LengthProbe | undefined {
    for (const [table, s] of this.searches) {
      if (s.ceilingNext) return { table, start: s.start, count: s.ceiling };
      if (s.bad - s.good > 1) return { table, start: s.start, count: Math.floor((s.good + s.bad) / 2) };
      if (now >= s.reprobeAt) return { table, start: s.start, count: s.bad };
    }
    return undefined;
  }

  served(probe: LengthProbe, now: number): ProbeServed {
    const s = this.searches.get(probe.table);
    if (!s || probe.count <= s.good) return { kind: 'same' };
    if (probe.count >= s.ceiling) {
      this.searches.delete(probe.table);
      return { kind: 'forget' };
    }
    s.good = probe.count;
    if (s.good >= s.bad) { // the first bad length served: the ceiling next, the search below it if that times out
      s.bad = s.ceiling;
      s.reprobes = 0;
      s.ceilingNext = true;
    }
    this.ended(s, now);
    return { kind: 'longer', count: s.good };
  }

  /** The probe timed out (or the gateway said the device did not answer it). */
  timedOut(probe: LengthProbe, now: number): void {
    const s = this.searches.get(probe.table);
    if (!s || probe.count <= s.good) return;
    s.ceilingNext = false;
    if (s.bad - s.good <= 1 && probe.count >= s.bad) s.reprobes += 1; // the first bad length, again
    s.bad = Math.min(s.bad, probe.count);
    this.ended(s, now);
  }

  /** Once good and bad are next to each other, the first bad length waits for its re-probe. */
  private ended(s: Search, now: number): void {
    if (s.bad - s.good <= 1) s.reprobeAt = now + this.reprobeMs() * 2 ** Math.min(s.reprobes, MAX_REPROBE_DOUBLINGS);
  }
}
