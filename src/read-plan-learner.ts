// What the poller learned about one device's read map, for the life of the process: cuts (no
// request may cross them) and points whose own read is refused (read alone, re-probed rarely).
// Time is passed in; the poller owns one learner per device.
import type { DeviceLimits, PointConfig } from './config/site-types.js';
import type { Logger } from './log.js';
import { planReads, pointWidth, type ReadRequest } from './modbus/plan.js';
import type { Table } from './points/types.js';

/** Default pause before an isolated point's read is tried again. */
export const DEFAULT_REPROBE_FAILED_MS = 60_000;
/** Timeouts in a row of the same merged request before it is split (one may be noise). */
const TIMEOUTS_BEFORE_SPLIT = 2;

export interface LearnedLimit {
  table: Table;
  /**
   * `split`: no request crosses `address`; `isolated`: the point at `address` is refused alone;
   * `max-count`: requests in this table are at most `count` registers (or bits) long.
   */
  kind: 'split' | 'isolated' | 'max-count';
  address?: number;
  count?: number;
  point?: string;
  reason: string;
}

export interface CyclePlan {
  /** Requests to run now: the regular plan, then the isolated points whose probe is due. */
  requests: ReadRequest[];
  /** Isolated points not probed this cycle, with why they were isolated. */
  waiting: Array<{ point: PointConfig; reason: string }>;
}

interface Isolated {
  point: PointConfig;
  reason: string;
  nextProbeAt: number;
}

export class ReadPlanLearner {
  private readonly cuts = new Map<Table, Set<number>>();
  private readonly maxCount = new Map<Table, number>();
  private readonly isolated = new Map<string, Isolated>();
  private readonly learned: LearnedLimit[] = [];
  private readonly timeoutStrikes = new Map<string, number>();
  private plan: readonly ReadRequest[];

  /** `plan`: the device's compiled plan (config/compile.ts), planned here when not given. */
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

  planAt(now: number): CyclePlan {
    const requests = [...this.plan];
    const waiting: CyclePlan['waiting'] = [];
    for (const entry of this.isolated.values()) {
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
    return this.isolated.has(pointId);
  }

  /** A merged request timed out: true once it did so often enough in a row to be split. */
  timedOut(request: ReadRequest): boolean {
    const key = requestKey(request);
    const strikes = (this.timeoutStrikes.get(key) ?? 0) + 1;
    this.timeoutStrikes.set(key, strikes);
    return strikes >= TIMEOUTS_BEFORE_SPLIT;
  }

  answered(request: ReadRequest): void {
    if (this.timeoutStrikes.size > 0) this.timeoutStrikes.delete(requestKey(request));
  }

  /** `request` was refused while both its halves (split at `cut`) were served. */
  learnCut(request: ReadRequest, cut: number, reason: string): void {
    const tableCuts = this.cuts.get(request.table) ?? new Set<number>();
    if (tableCuts.has(cut)) return;
    tableCuts.add(cut);
    this.cuts.set(request.table, tableCuts);
    this.learned.push({ table: request.table, kind: 'split', address: cut, reason });
    this.log.warn({ table: request.table, start: request.start, count: request.count, splitAt: cut, reason }, 'read plan learned: request split');
    this.replan();
  }

  /** `request` timed out repeatedly while both its halves were served: requests must be shorter. */
  learnMaxCount(request: ReadRequest, reason: string): void {
    const count = request.count - 1;
    const known = this.maxCount.get(request.table);
    if (known !== undefined && known <= count) return;
    this.maxCount.set(request.table, count);
    const index = this.learned.findIndex((l) => l.kind === 'max-count' && l.table === request.table);
    if (index >= 0) this.learned.splice(index, 1);
    this.learned.push({ table: request.table, kind: 'max-count', count, reason });
    this.log.warn({ table: request.table, start: request.start, count: request.count, maxCount: count, reason }, 'read plan learned: shorter requests');
    this.replan();
  }

  /** The point's own read was refused: it leaves the plan and is re-probed every `reprobeFailedMs`. */
  isolate(point: PointConfig, reason: string, now: number): void {
    if (this.isolated.has(point.id)) return;
    this.isolated.set(point.id, { point, reason, nextProbeAt: now + this.reprobeMs });
    this.learned.push({ table: point.table, kind: 'isolated', address: point.address, point: point.id, reason });
    this.log.warn({ table: point.table, address: point.address, count: pointWidth(point), point: point.id, reason, reprobeMs: this.reprobeMs }, 'read plan learned: point isolated');
    this.replan();
  }

  /** An isolated point read again: it rejoins the plan (the device's map was broken for a while). */
  recovered(pointId: string): void {
    if (!this.isolated.delete(pointId)) return;
    const index = this.learned.findIndex((l) => l.kind === 'isolated' && l.point === pointId);
    if (index >= 0) this.learned.splice(index, 1);
    this.replan();
  }

  limitsLearned(): LearnedLimit[] {
    return this.learned.map((l) => ({ ...l }));
  }

  private replan(): void {
    this.timeoutStrikes.clear();
    const cuts = new Map<Table, Set<number>>();
    for (const [table, set] of this.cuts) cuts.set(table, new Set(set));
    // No request may span an isolated point: cut at both of its ends.
    for (const { point } of this.isolated.values()) {
      const set = cuts.get(point.table) ?? new Set<number>();
      set.add(point.address);
      set.add(point.address + pointWidth(point));
      cuts.set(point.table, set);
    }
    this.plan = planReads(this.points.filter((p) => !this.isolated.has(p.id)), this.limits, { cuts, maxCount: this.maxCount });
  }
}

function singleRead(point: PointConfig): ReadRequest {
  return { table: point.table, start: point.address, count: pointWidth(point), points: [point] };
}

function requestKey(request: ReadRequest): string {
  return `${request.table}:${request.start}:${request.count}`;
}
