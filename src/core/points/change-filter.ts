// Decides which polled values are worth sending (pure; the caller passes the time in).
import type { PointConfig, ReportConfig } from '../config/site-types.js';
import type { PointValue } from './types.js';

type FilteredPoint = Pick<PointConfig, 'id' | 'report'>;

/** What was last sent, per point index; allocated at the first point that is not in `always` mode. */
interface SentState {
  /** 1 once the point's value was sent (0 again after forget). */
  sent: Uint8Array;
  value: PointValue[];
  atMs: Float64Array;
  /** Snapshot generation at the time of sending; older than the filter's = must resend. */
  generation: Float64Array;
}

/**
 * Point id -> index in its list, one map per frozen list: devices sharing a point list
 * (core/config/shared-point-lists.ts) share it. A list that can still change gets its own.
 */
const indexesByList = new WeakMap<readonly FilteredPoint[], ReadonlyMap<string, number>>();

function indexesOf(points: readonly FilteredPoint[]): ReadonlyMap<string, number> {
  let indexes = indexesByList.get(points);
  if (!indexes) {
    // A repeated id takes the last entry's settings.
    indexes = new Map(points.map((point, index) => [point.id, index]));
    if (Object.isFrozen(points)) indexesByList.set(points, indexes);
  }
  return indexes;
}

/**
 * Per point: send the first value, then only values that moved beyond the deadband (relative to
 * the last value SENT, so slow creep still gets through), or every value in `always` mode, or
 * an unchanged value once `maxSilenceMs` has passed since the last send (heartbeat).
 * Compact per device (typed arrays by point index, the settings read from the shared list): a
 * gateway keeps one filter per device for months.
 */
export class ChangeFilter {
  private readonly indexes: ReadonlyMap<string, number>;
  private state: SentState | undefined;
  private generation = 0;

  constructor(private readonly points: readonly FilteredPoint[]) {
    this.indexes = indexesOf(points);
  }

  /** True when the value should be sent now; it is then remembered as the last sent value. */
  offer(pointId: string, value: PointValue, nowMs: number): boolean {
    const index = this.indexes.get(pointId);
    // Unknown points carry no settings: sending is the safe default.
    if (index === undefined) return true;
    const report = this.points[index]!.report;
    if (report.mode === 'always') return true;
    const state = (this.state ??= sentState(this.points.length));
    if (state.sent[index] === 1 && !this.mustSend(state, index, report, value, nowMs)) return false;
    state.sent[index] = 1;
    state.value[index] = value;
    state.atMs[index] = nowMs;
    state.generation[index] = this.generation;
    return true;
  }

  /** The next offer of every point is sent (e.g. after the cloud link reconnects). */
  forceSnapshot(): void {
    this.generation++;
  }

  /** Drop what was sent for a point (it went stale or offline): its next value is sent. */
  forget(pointId: string): void {
    const index = this.indexes.get(pointId);
    if (index !== undefined && this.state) this.state.sent[index] = 0;
  }

  /** forget() of every point. */
  forgetAll(): void {
    this.state?.sent.fill(0);
  }

  private mustSend(state: SentState, index: number, report: ReportConfig, value: PointValue, nowMs: number): boolean {
    if (state.generation[index] !== this.generation) return true;
    const atMs = state.atMs[index]!;
    // A clock that stepped backwards would otherwise suppress the heartbeat until it caught up.
    if (nowMs < atMs) return true;
    if (report.maxSilenceMs > 0 && nowMs - atMs >= report.maxSilenceMs) return true;
    return changed(report, state.value[index]!, value);
  }
}

function sentState(count: number): SentState {
  return { sent: new Uint8Array(count), value: new Array<PointValue>(count).fill(0), atMs: new Float64Array(count), generation: new Float64Array(count) };
}

/** Numbers compare through the deadband; everything else (and a change of kind) by equality. */
function changed(report: ReportConfig, previous: PointValue, value: PointValue): boolean {
  if (Object.is(previous, value)) return false;
  if (typeof previous !== 'number' || typeof value !== 'number') return previous !== value;
  if (Number.isNaN(previous) || Number.isNaN(value)) return true;
  const delta = Math.abs(value - previous);
  if (delta === 0) return false; // 0 and -0
  const threshold = report.deadbandKind === 'percent' ? (Math.abs(previous) * report.deadband) / 100 : report.deadband;
  // A deadband of 0 sends every change; otherwise the value must move beyond the band. The tiny
  // margin makes a move of exactly the band (1.0 -> 1.1 with band 0.1) count as "not beyond"
  // whatever binary rounding says.
  return delta > threshold * (1 + 1e-9);
}
