// One poll cycle of one device: run its current read plan, decode each point, bisect a merged
// request the device refuses (exception 2/3) until the refusal is isolated, so every other point
// still reports in the same cycle, and send a merged request that timed out as its halves.
import type { PointConfig } from '../core/config/site-types.js';
import type { EpochMs, MonoMs } from '../core/time.js';
import type { RequestOptions } from '../field/modbus/bus-request.js';
import {
  BusDownError, BusStoppedError, isRefusal, ModbusExceptionError, ModbusTimeoutError, UnitCoolingDownError,
  RequestCancelledError, UnitLateReplyPendingError,
} from '../field/modbus/errors.js';
import { pointWidth, splitRequest, type ReadRequest } from '../core/modbus/plan.js';
import type { PointCodec, ReadBlock } from '../core/points/codec.js';
import type { PointValue, Table } from '../core/points/types.js';
import type { ReadPlanLearner } from './read-plan-learner.js';
import { applyScaleFactors, scaledPointsOf } from './scaled-points.js';
import { QueueFullError } from '../core/queue-full-error.js';

/** The part of Bus the poller uses (a fake in tests). */
export interface PollBus {
  read(unit: number, table: Table, start: number, count: number, options?: RequestOptions): Promise<ReadBlock>;
}

export interface SampleError {
  /** Points left without a value by this error. */
  points: string[];
  table: Table;
  start: number;
  count: number;
  /** Error class name, e.g. ModbusTimeoutError, ModbusExceptionError, UnitCoolingDownError. */
  kind: string;
  message: string;
}

export interface Sample {
  device: string;
  /** When the cycle started, on the wall clock: the report's time (leaves the process). */
  ts: EpochMs;
  /** When the cycle started, on the monotonic clock: ages and the change filter's silences. */
  at: MonoMs;
  values: Record<string, PointValue>;
  errors: SampleError[];
  /**
   * Point id -> why it has no value though nothing failed: its scale factor holds the device's
   * "not implemented" value. (A point holding that value itself is simply missing from values.)
   */
  absent?: Record<string, string>;
}

/** A point the device answered for, but that yielded no value (refused, or undecodable). */
export interface PointFailure {
  point: PointConfig;
  kind: string;
  message: string;
  exceptionCode?: number;
}

export interface CycleOutcome {
  /** The error that cut the cycle short (timeout, cool-down, bus down), if any. */
  abort: unknown;
  failures: PointFailure[];
}

export interface CycleContext {
  bus: PollBus;
  unitId: number;
  codecs: ReadonlyMap<string, PointCodec>;
  learner: ReadPlanLearner;
  now: () => MonoMs;
  /** The cycle's owner: aborted when a reload removes or replaces the device, so its queued reads leave the queue. */
  signal?: AbortSignal;
}

/**
 * Errors after which the rest of the cycle's requests would only fail too (or cost line time). Not
 * the late-reply guard: it holds back only requests of one reply shape (its other reads may go).
 */
const ABORTS_CYCLE = [ModbusTimeoutError, UnitCoolingDownError, BusDownError, BusStoppedError, QueueFullError, RequestCancelledError];

/** One cycle in progress: where its values, errors and lessons go. */
interface CycleRun {
  ctx: CycleContext;
  out: CycleOutcome;
  sample: Sample;
  /** Timed-out requests whose halves were both served: sent whole once more at the end of the cycle. */
  confirms: Array<{ request: ReadRequest; cut: number; halfCount: number }>;
  /** Requests the device had answered when the cycle began. */
  answersAtStart: number;
}

export async function runCycle(ctx: CycleContext, sample: Sample): Promise<CycleOutcome> {
  const outcome: CycleOutcome = { abort: undefined, failures: [] };
  const run: CycleRun = { ctx, out: outcome, sample, confirms: [], answersAtStart: ctx.learner.answers() };
  const { requests, waiting } = ctx.learner.planAt(sample.at);
  for (const request of requests) await runRequest(run, request);
  // After the values: on RTU the confirming timeout guards its length (a unit seen late: the whole unit).
  if (outcome.abort === undefined) for (const confirm of run.confirms) await confirmTooLong(ctx, confirm);
  if (outcome.abort === undefined && run.confirms.length === 0) await probeLength(ctx);
  const unread = new Set([...sample.errors.flatMap((e) => e.points), ...waiting.map((w) => w.point.id)]);
  for (const { point, message } of applyScaleFactors(sample.values, scaledPointsOf(ctx.codecs))) {
    const factorId = point.scaleFactor as string;
    // A factor that was read and holds "not implemented" makes its points absent, not failed.
    if (sample.values[factorId] === undefined && ctx.codecs.has(factorId) && !unread.has(factorId)) {
      sample.absent = { ...sample.absent, [point.id]: `scale factor "${factorId}" not implemented` };
      continue;
    }
    sample.errors.push({ points: [point.id], table: point.table, start: point.address, count: pointWidth(point), kind: 'ScaleFactorError', message });
  }
  for (const { point, reason } of waiting) {
    sample.errors.push({
      points: [point.id], table: point.table, start: point.address, count: pointWidth(point), kind: 'IsolatedPointError',
      message: `point "${point.id}" is isolated: its own read was refused (${reason}); it is re-probed later`,
    });
  }
  return outcome;
}

/**
 * Runs one request (as its halves when it timed out before or is longer than learned, bisected
 * when refused); true when the device served it (every part of it answered with values).
 * `timeoutSplit`: a half of a request that timed out.
 */
async function runRequest(run: CycleRun, request: ReadRequest, timeoutSplit = false): Promise<boolean> {
  const { ctx, out, sample } = run;
  if (out.abort !== undefined) {
    sample.errors.push(sampleErrorOf(request, out.abort));
    return false;
  }
  const halves = splitRequest(request);
  const split = halves && ctx.learner.splitDue(request);
  if (halves && split) {
    const left = await runRequest(run, halves.left, true);
    const right = await runRequest(run, halves.right, true);
    if (left && right && split === 'timed-out') {
      run.confirms.push({ request, cut: halves.cut, halfCount: Math.max(halves.left.count, halves.right.count) });
    }
    return left && right;
  }
  let block: ReadBlock;
  try {
    block = await ctx.bus.read(ctx.unitId, request.table, request.start, request.count, ctx.signal ? { signal: ctx.signal } : undefined);
  } catch (err) {
    return refused(run, request, err, timeoutSplit);
  }
  ctx.learner.answered(request);
  // Served, but maybe as the bus's pieces: its whole length is confirmed at the end of the cycle.
  if (halves && ctx.learner.wholeUnconfirmed(request)) run.confirms.push({ request, cut: halves.cut, halfCount: Math.max(halves.left.count, halves.right.count) });
  const single = request.points.length === 1 ? request.points[0] : undefined;
  if (single && ctx.learner.isIsolated(single.id)) ctx.learner.recovered(single.id);
  decodeInto(ctx, request, block, out, sample);
  return true;
}

/**
 * A refused request (exception 2/3) is bisected at once: both halves served means a refusal lies
 * across the cut. A request that timed out on the line goes out as its halves from the next cycle
 * (read-plan-learner.ts); a single point of such a split that times out too, with nothing
 * answered this cycle, means the device is away. A request the bus refused without sending it
 * (late-reply guard, cool-down, bus down), or that timed out as one of the pieces the bus sent it
 * as, tells nothing about its length: it is tried again as is.
 */
async function refused(run: CycleRun, request: ReadRequest, err: unknown, timeoutSplit: boolean): Promise<boolean> {
  const { ctx, out, sample } = run;
  const halves = splitRequest(request);
  if (halves && isRefusal(err)) {
    const leftRead = await runRequest(run, halves.left);
    const rightRead = await runRequest(run, halves.right);
    if (leftRead && rightRead) ctx.learner.learnCut(request, halves.cut, reasonOf(err));
    return false;
  }
  if (noAnswer(err) && !pieceTimedOut(request, err)) {
    // Whole on the wire and silent again, after one register less was served: that is the lesson.
    if (halves && ctx.learner.wholeUnconfirmed(request)) ctx.learner.learnMaxCount(request, halves.cut, reasonOf(err), ctx.now());
    else if (halves) ctx.learner.timedOut(request, ctx.now());
    else if (timeoutSplit && ctx.learner.answers() === run.answersAtStart) ctx.learner.deviceSilent(ctx.now());
  }
  sample.errors.push(sampleErrorOf(request, err));
  if (ABORTS_CYCLE.some((type) => err instanceof type)) {
    out.abort = err;
    return false;
  }
  if (err instanceof ModbusExceptionError && !err.isGatewayNoResponse) {
    for (const point of request.points) out.failures.push(failureOf(point, err));
    if (isRefusal(err) && request.points.length === 1) ctx.learner.isolate(request.points[0]!, reasonOf(err), ctx.now());
  }
  return false;
}

/**
 * Re-sends a timed-out request whose halves were just served (its values came from the halves):
 * a timeout again means the device is length-limited; an answer, that it was away for a while or
 * a frame was lost. It goes whole or not at all (never as the bus's shorter pieces). While the
 * late-reply guard still holds the length of the read that timed out (RTU), one register or bit
 * shorter: still longer than either half, so its timeout says the same, a cycle later, not a
 * guard later. Served, that shorter read tells nothing (a lost frame, or a device serving exactly
 * that): the request goes whole again (the bus's pieces while guarded), and after each cycle its
 * whole length is tried as a probe until the guard lets it go; the first whole read on the wire
 * (the poll's or the probe) decides.
 */
async function confirmTooLong(ctx: CycleContext, { request, cut, halfCount }: CycleRun['confirms'][number]): Promise<void> {
  if (ctx.learner.knowsShorterThan(request)) return;
  for (const count of ctx.learner.confirmLengths(request)) {
    if (count <= halfCount) return;
    try {
      await ctx.bus.read(ctx.unitId, request.table, request.start, count, { lengthProbe: true, ...(ctx.signal ? { signal: ctx.signal } : {}) });
    } catch (err) {
      if (err instanceof UnitLateReplyPendingError) continue;
      if (noAnswer(err)) ctx.learner.learnMaxCount(request, cut, reasonOf(err), ctx.now());
      else if (isRefusal(err) && count === request.count) ctx.learner.learnCut(request, cut, reasonOf(err));
      return; // refused by the bus itself (cool-down, bus down): no evidence, split and confirmed again next cycle
    }
    if (count === request.count) ctx.learner.wholeConfirmed(request);
    else ctx.learner.answeredShorter(request, count);
    return;
  }
}

/**
 * Once a shorter read length was learned, one read of a cycle without other lessons looks for the
 * exact one (read-length-search.ts), after the values, whole or not at all. Refused by the bus
 * itself (late-reply guard, cool-down, bus down) it is no evidence and is tried next cycle.
 */
async function probeLength(ctx: CycleContext): Promise<void> {
  const probe = ctx.learner.lengthProbe(ctx.now());
  if (!probe) return;
  try {
    await ctx.bus.read(ctx.unitId, probe.table, probe.start, probe.count, { lengthProbe: true, ...(ctx.signal ? { signal: ctx.signal } : {}) });
  } catch (err) {
    if (noAnswer(err) || isRefusal(err)) ctx.learner.lengthProbeTimedOut(probe, ctx.now());
    return;
  }
  ctx.learner.lengthProbeServed(probe, ctx.now());
}

function decodeInto(ctx: CycleContext, request: ReadRequest, block: ReadBlock, out: CycleOutcome, sample: Sample): void {
  for (const point of request.points) {
    try {
      const value = (ctx.codecs.get(point.id) as PointCodec).decode(block);
      if (value !== undefined) sample.values[point.id] = value;
    } catch (err) {
      sample.errors.push({ ...sampleErrorOf(request, err), points: [point.id] });
      out.failures.push(failureOf(point, err));
    }
  }
}

/** No answer on the line: a timeout, or a gateway's "target device failed to respond" (exception 11). */
function noAnswer(err: unknown): boolean {
  return err instanceof ModbusTimeoutError || (err instanceof ModbusExceptionError && err.code === 11);
}

/**
 * The bus sent `request` as shorter pieces (late-reply guard, RTU) and one of them timed out: a
 * frame lost on the line, no evidence about the length of `request`, which is not split for it
 * (splits on top of the guard's pieces would leave no read length the guard lets through).
 */
function pieceTimedOut(request: ReadRequest, err: unknown): boolean {
  return err instanceof ModbusTimeoutError && err.request !== undefined && err.request.quantity < request.count;
}

function reasonOf(err: unknown): string {
  if (err instanceof ModbusExceptionError) return `exception ${err.code} (${err.exceptionName})`;
  if (err instanceof ModbusTimeoutError) return 'timeout';
  return err instanceof Error ? err.message : String(err);
}

function failureOf(point: PointConfig, err: unknown): PointFailure {
  return {
    point,
    kind: err instanceof Error ? err.name : 'Error',
    message: err instanceof Error ? err.message : String(err),
    ...(err instanceof ModbusExceptionError ? { exceptionCode: err.code } : {}),
  };
}

function sampleErrorOf(request: ReadRequest, err: unknown): SampleError {
  return {
    points: request.points.map((p) => p.id),
    table: request.table,
    start: request.start,
    count: request.count,
    kind: err instanceof Error ? err.name : 'Error',
    message: err instanceof Error ? err.message : String(err),
  };
}
