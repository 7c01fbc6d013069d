// Decides which polled values are worth sending (pure; the caller passes the time in).
import type { PointConfig, ReportConfig } from '../config/site-types.js';
import type { PointValue } from './types.js';

interface PointState {
  report: ReportConfig;
  /** Last value sent and when; `sent` false until the first send (or after forget). */
  sent: boolean;
  value: PointValue;
  atMs: number;
  /** Snapshot generation at the time of sending; older than the filter's = must resend. */
  generation: number;
}

/**
 * Per point: send the first value, then only values that moved beyond the deadband (relative to
 * the last value SENT, so slow creep still gets through), or every value in `always` mode, or
 * an unchanged value once `maxSilenceMs` has passed since the last send (heartbeat).
 */
export class ChangeFilter {
  /** One entry per point, updated in place: offer() runs for every point of every poll. */
  private readonly points = new Map<string, PointState>();
  private generation = 0;

  constructor(points: readonly Pick<PointConfig, 'id' | 'report'>[]) {
    for (const point of points) this.points.set(point.id, { report: point.report, sent: false, value: 0, atMs: 0, generation: 0 });
  }

  /** True when the value should be sent now; it is then remembered as the last sent value. */
  offer(pointId: string, value: PointValue, nowMs: number): boolean {
    const state = this.points.get(pointId);
    // Unknown points carry no settings: sending is the safe default.
    if (state === undefined) return true;
    if (state.report.mode === 'always') return true;
    if (state.sent && !this.mustSend(state, value, nowMs)) return false;
    state.sent = true;
    state.value = value;
    state.atMs = nowMs;
    state.generation = this.generation;
    return true;
  }

  /** The next offer of every point is sent (e.g. after the cloud link reconnects). */
  forceSnapshot(): void {
    this.generation++;
  }

  /** Drop what was sent for a point (it went stale or offline): its next value is sent. */
  forget(pointId: string): void {
    const state = this.points.get(pointId);
    if (state) state.sent = false;
  }

  private mustSend(state: PointState, value: PointValue, nowMs: number): boolean {
    const report = state.report;
    if (state.generation !== this.generation) return true;
    // A clock that stepped backwards would otherwise suppress the heartbeat until it caught up.
    if (nowMs < state.atMs) return true;
    if (report.maxSilenceMs > 0 && nowMs - state.atMs >= report.maxSilenceMs) return true;
    return changed(report, state.value, value);
  }
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
