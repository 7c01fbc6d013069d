// What the poller learned about one device's read map, for the life of the process: cuts (no
// request may cross them) and points whose own read is refused (read alone, re-probed rarely).
// Time is passed in; the poller owns one learner per device.
import type { DeviceLimits, PointConfig } from '../core/config/site-types.js';
import type { Logger } from '../core/logger.js';
import type { MonoMs } from '../core/time.js';
import { cutsAround, planReads, pointWidth, singleRead, type LearnedReadLimits, type ReadRequest } from '../core/modbus/plan.js';
import type { Table } from '../core/points/types.js';
import type { CyclePlan, LearnedLimit, SplitReason } from './read-plan-types.js';
import { type LengthProbe, ReadLengths } from './read-length-search.js';

export type { CyclePlan, LearnedLimit, SplitReason } from './read-plan-types.js';

/** Default pause before an isolated point's read is tried again. */
export const DEFAULT_REPROBE_FAILED_MS = 60_000;

interface Isolated {
  point: PointConfig;
  reason: string;
  /** Monotonic. */
  nextProbeAt: number;
}

/** The learned state a plan is built from; replaced whole, only once its plan was built. */
interface LearnedState {
  cuts: ReadonlyMap<Table, ReadonlySet<number>>;
  maxCount: ReadonlyMap<Table, number>;
  isolated: ReadonlyMap<string, Isolated>;
}

export class ReadPlanLearner {
  private state: LearnedState = { cuts: new Map(), maxCount: new Map(), isolated: new Map() };
  private readonly learned: LearnedLimit[] = [];
  /** Merged requests that timed out on the line: sent as their halves until confirmed or answered. */
  private readonly timedOutRequests = new Set<string>();
  /**
   * Timed-out requests whose one-shorter confirming read was served (a lost frame, or a device that
   * serves exactly one less): sent whole again (the bus splits them while their length is
   * guarded), their whole length still to be confirmed on the wire.
   */
  private readonly shorterServed = new Set<string>();
  private readonly planFailuresLogged = new Set<string>();
  /**
   * Set when a timed-out request, split down to one point, got no answer either (the device is
   * away, not length-limited): no timeout split before this time, unless the device answers first.
   */
  private timeoutSplitsPausedUntil = -Infinity;
  private answerCount = 0;
  /** What was served, the last length lesson, the exact length's search (read-length-search.ts). */
  private readonly lengths = new ReadLengths(() => this.reprobeMs);
  private plan: readonly ReadRequest[];

  /** `plan`: the device's compiled plan (core/config/compile.ts), planned here when not given. */
  constructor(
    private readonly points: readonly PointConfig[],
    private readonly limits: DeviceLimits,
    private readonly log: Logger,
    plan?: readonly ReadRequest[],
  ) {
    this.plan = plan ?? planReads(points, limits);
  }

  private get reprobeMs(): number {
    return this.limits.reprobeFailedMs ?? DEFAULT_REPROBE_FAILED_MS;
  }

  planAt(now: MonoMs): CyclePlan {
    const requests = [...this.plan];
    const waiting: CyclePlan['waiting'] = [];
    for (const entry of this.state.isolated.values()) {
      if (entry.nextProbeAt <= now) {
        entry.nextProbeAt = now + this.reprobeMs;
        requests.push(singleRead(entry.point));
      } else {
        waiting.push({ point: entry.point, reason: entry.reason });
      }
    }
    return { requests, waiting };
  }

  isIsolated(pointId: string): boolean {
    return this.state.isolated.has(pointId);
  }

  /**
   * A merged request timed out on the line (a request the bus refused without sending it is no
   * evidence and never comes here): from the next cycle it is sent as its two halves. Not while
   * the device is away (a split found it silent, tried again every `reprobeFailedMs`), so a dead
   * device costs one timeout per cycle.
   */
  timedOut(request: ReadRequest, now: MonoMs): void {
    if (now < this.timeoutSplitsPausedUntil) return;
    this.timedOutRequests.add(requestKey(request));
  }

  /**
   * Whether `request` goes out as its halves: it timed out (until the whole answers or a lesson
   * replaces it), or it is longer than a length learned since it was planned.
   */
  splitDue(request: ReadRequest): SplitReason | undefined {
    if (this.timedOutRequests.has(requestKey(request))) return 'timed-out';
    return this.knowsShorterThan(request) ? 'too-long' : undefined;
  }

  answered(request: ReadRequest): void {
    this.answerCount += 1;
    this.timeoutSplitsPausedUntil = -Infinity;
    // A read whose whole length is unconfirmed may have gone as the bus's pieces: no length known to work.
    if (!this.shorterServed.has(requestKey(request))) this.lengths.servedRead(request);
    if (this.timedOutRequests.size > 0) this.timedOutRequests.delete(requestKey(request));
  }

  /**
   * The device answered a read of `count` for `request` (which timed out once, its halves served),
   * one shorter than it while the whole's length was still guarded. That says "a lost frame" or "it
   * serves exactly `count`" alike: `request` goes whole again (as the bus's pieces while guarded,
   * which avoid every length it holds), and its whole length is confirmed once the guard lets it go.
   */
  answeredShorter(request: ReadRequest, count: number): void {
    this.answered({ ...request, count, points: [] });
    this.timedOutRequests.delete(requestKey(request));
    this.shorterServed.add(requestKey(request));
  }

  /** Whether `request` served one shorter and its whole length is still to be confirmed on the wire. */
  wholeUnconfirmed(request: ReadRequest): boolean {
    return this.shorterServed.has(requestKey(request));
  }

  /** The whole length of `request` was served on the wire (a read-length probe): the timeout was a lost frame. */
  wholeConfirmed(request: ReadRequest): void {
    this.shorterServed.delete(requestKey(request));
    this.answered(request);
  }

  /**
   * The lengths to confirm a timed-out `request` with, in order: the whole, then (while the guard
   * holds the whole's length) one shorter; only the whole once the shorter one was served.
   */
  confirmLengths(request: ReadRequest): number[] {
    return this.wholeUnconfirmed(request) ? [request.count] : [request.count, request.count - 1];
  }

  /** Requests the device answered so far (to tell whether it answered anything during a split). */
  answers(): number {
    return this.answerCount;
  }

  /** A timed-out request split down to one point got no answer either: forget the splits, pause them until it answers. */
  deviceSilent(now: MonoMs): void {
    this.timedOutRequests.clear();
    this.shorterServed.clear();
    this.timeoutSplitsPausedUntil = now + this.reprobeMs;
  }

  /** True when a shorter length already learned for its table rules `request` out of future plans. */
  knowsShorterThan(request: ReadRequest): boolean {
    return (this.state.maxCount.get(request.table) ?? Infinity) < request.count;
  }

  /** `request` was refused while both its halves (split at `cut`) were served. */
  learnCut(request: ReadRequest, cut: number, reason: string): void {
    const tableCuts = this.state.cuts.get(request.table);
    if (tableCuts?.has(cut)) return;
    const cuts = new Map(this.state.cuts).set(request.table, new Set(tableCuts).add(cut));
    if (!this.replan({ ...this.state, cuts })) return;
    this.learned.push({ table: request.table, kind: 'split', address: cut, reason });
    this.log.warn({ table: request.table, start: request.start, count: request.count, splitAt: cut, reason }, 'read plan learned: request split');
  }

  /**
   * `request` timed out again right after both its halves (split at `cut`) were served: requests
   * must be shorter. Halving, not one register a round: as long as the longest request the device
   * served, at least half of `request` (a sparse request's halves may be short), never shorter
   * than the table's widest point (which the device reads alone); the exact length is then
   * searched for between that and `request`'s (read-length-search.ts). When that leaves `request`
   * as long as it is (the device served as long a read elsewhere), the length is not the trouble
   * and `request` is cut. `request` itself served whole before: the device changed (a power cycle
   * with a smaller limit), and what it served before says nothing any more.
   */
  learnMaxCount(request: ReadRequest, cut: number, reason: string, now: MonoMs): void {
    const served = this.lengths.longestServed(request.table, request);
    const count = Math.max(served, Math.ceil(request.count / 2), this.widestPoint(request.table));
    if (count >= request.count) {
      this.learnCut(request, cut, reason);
      return;
    }
    const known = this.state.maxCount.get(request.table);
    if (known !== undefined && known <= count) return;
    if (!this.replan({ ...this.state, maxCount: new Map(this.state.maxCount).set(request.table, count) })) return;
    const index = this.learned.findIndex((l) => l.kind === 'max-count' && l.table === request.table);
    if (index >= 0) this.learned.splice(index, 1);
    this.learned.push({ table: request.table, kind: 'max-count', count, reason });
    this.lengths.learned(request.table, request.start, count, request.count, now);
    this.log.warn({ table: request.table, start: request.start, count: request.count, maxCount: count, reason }, 'read plan learned: shorter requests');
  }

  /** The read-length probe due this cycle (after a shorter length was learned), if any. */
  lengthProbe(now: MonoMs): LengthProbe | undefined {
    return this.lengths.next(now);
  }

  /** The probe was served whole: requests that long are planned (all of them, once the longest that timed out is served). */
  lengthProbeServed(probe: LengthProbe, now: MonoMs): void {
    this.answered({ ...probe, points: [] });
    const served = this.lengths.served(probe, now);
    if (served.kind === 'same') return;
    const maxCount = new Map(this.state.maxCount);
    if (served.kind === 'forget') maxCount.delete(probe.table);
    else maxCount.set(probe.table, served.count);
    if (!this.replan({ ...this.state, maxCount })) return;
    const index = this.learned.findIndex((l) => l.kind === 'max-count' && l.table === probe.table);
    const longer = served.kind === 'longer' ? served.count : undefined;
    if (index >= 0) this.learned.splice(index, 1, ...(longer === undefined ? [] : [{ ...(this.learned[index] as LearnedLimit), count: longer }]));
    // maxCount null: the longest read that ever timed out was served, the length lesson is forgotten.
    this.log.info({ table: probe.table, start: probe.start, count: probe.count, maxCount: longer ?? null }, 'read plan learned: longer requests served');
  }

  /** It timed out (on RTU after the bus's identical repeat): nothing that long is tried again soon. */
  lengthProbeTimedOut(probe: LengthProbe, now: MonoMs): void {
    this.lengths.timedOut(probe, now);
  }

  /** "reads longer than 4 registers time out", when a shorter length was learned at or after `since`. */
  lengthLessonSince(since: number): string | undefined {
    return this.lengths.lessonSince(since);
  }

  /** The point's own read was refused: it leaves the plan and is re-probed every `reprobeFailedMs`. */
  isolate(point: PointConfig, reason: string, now: MonoMs): void {
    if (this.state.isolated.has(point.id)) return;
    const isolated = new Map(this.state.isolated).set(point.id, { point, reason, nextProbeAt: now + this.reprobeMs });
    if (!this.replan({ ...this.state, isolated })) return;
    this.learned.push({ table: point.table, kind: 'isolated', address: point.address, point: point.id, reason });
    this.log.warn({ table: point.table, address: point.address, count: pointWidth(point), point: point.id, reason, reprobeMs: this.reprobeMs }, 'read plan learned: point isolated');
  }

  /** An isolated point read again: it rejoins the plan (the device's map was broken for a while). */
  recovered(pointId: string): void {
    if (!this.state.isolated.has(pointId)) return;
    const isolated = new Map(this.state.isolated);
    isolated.delete(pointId);
    if (!this.replan({ ...this.state, isolated })) return;
    const index = this.learned.findIndex((l) => l.kind === 'isolated' && l.point === pointId);
    if (index >= 0) this.learned.splice(index, 1);
  }

  limitsLearned(): LearnedLimit[] {
    return this.learned.map((l) => ({ ...l }));
  }

  /** What the command path plans with: the same cuts (isolated points included) and lengths as polls. */
  readLimits(): LearnedReadLimits {
    return { cuts: cutsAround(this.state.cuts, isolatedPoints(this.state)), maxCount: this.state.maxCount };
  }

  private widestPoint(table: Table): number {
    let widest = 1;
    for (const point of this.points) if (point.table === table) widest = Math.max(widest, pointWidth(point));
    return widest;
  }

  /**
   * Builds the plan for `next` and only then commits it; a plan that cannot be built (a bug, or
   * limits below a point's width) leaves the old state and plan, logged once, so polling goes on.
   */
  private replan(next: LearnedState): boolean {
    let plan: ReadRequest[];
    try {
      plan = planReads(this.points.filter((p) => !next.isolated.has(p.id)), this.limits, { cuts: cutsAround(next.cuts, isolatedPoints(next)), maxCount: next.maxCount });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (!this.planFailuresLogged.has(message)) {
        this.planFailuresLogged.add(message);
        this.log.error({ err }, 'read plan not updated: planning failed');
      }
      return false;
    }
    this.timedOutRequests.clear();
    this.shorterServed.clear();
    this.state = next;
    this.plan = plan;
    return true;
  }
}

function isolatedPoints(state: LearnedState): PointConfig[] {
  return [...state.isolated.values()].map((entry) => entry.point);
}

function requestKey(request: ReadRequest): string {
  return `${request.table}:${request.start}:${request.count}`;
}
