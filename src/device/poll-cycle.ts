// One poll cycle of one device: run its current read plan, decode each point, and bisect a merged
// request the device refuses (exception 2/3, or repeated timeouts of only that request) until the
// refusal is isolated, so every other point still reports in the same cycle.
import type { PointConfig } from '../core/config/site-types.js';
import type { RequestOptions } from '../field/modbus/bus-request.js';
import {
  BusDownError, BusStoppedError, isRefusal, ModbusExceptionError, ModbusTimeoutError, UnitCoolingDownError,
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
  /** Epoch ms when the cycle started. */
  ts: number;
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
  now: () => number;
}

/**
 * Errors after which the rest of the cycle's requests would only fail too (or cost line time). Not
 * the late-reply guard: it holds back only requests of one reply shape (its other reads may go).
 */
const ABORTS_CYCLE = [ModbusTimeoutError, UnitCoolingDownError, BusDownError, BusStoppedError, QueueFullError];

export async function runCycle(ctx: CycleContext, sample: Sample): Promise<CycleOutcome> {
  const outcome: CycleOutcome = { abort: undefined, failures: [] };
  const { requests, waiting } = ctx.learner.planAt(sample.ts);
  for (const request of requests) await runRequest(ctx, request, outcome, sample);
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

/** Runs one request (bisecting it when refused); true when every one of its points decoded. */
async function runRequest(ctx: CycleContext, request: ReadRequest, out: CycleOutcome, sample: Sample, splitTimeouts = false): Promise<boolean> {
  if (out.abort !== undefined) {
    sample.errors.push(sampleErrorOf(request, out.abort));
    return false;
  }
  let block: ReadBlock;
  try {
    block = await ctx.bus.read(ctx.unitId, request.table, request.start, request.count);
  } catch (err) {
    return refused(ctx, request, err, out, sample, splitTimeouts);
  }
  ctx.learner.answered(request);
  const single = request.points.length === 1 ? request.points[0] : undefined;
  if (single && ctx.learner.isIsolated(single.id)) ctx.learner.recovered(single.id);
  return decodeInto(ctx, request, block, out, sample);
}

/**
 * A refused request (exception 2/3) is bisected at once; a timed-out one once it timed out twice
 * in a row (its halves then split on timeouts too). Both halves served: a refusal lies across the
 * cut; a timeout means the request was too long for the device only if it times out again right
 * after its halves were served (else the device was away for a while). Halves of a timed-out
 * request that got no answer at all: the device is away, timeout splits pause (read-plan-learner.ts).
 */
async function refused(ctx: CycleContext, request: ReadRequest, err: unknown, out: CycleOutcome, sample: Sample, splitTimeouts: boolean): Promise<boolean> {
  const halves = splitRequest(request);
  const timeout = err instanceof ModbusTimeoutError;
  if (halves && (isRefusal(err) || (timeout && (splitTimeouts || ctx.learner.timedOut(request, ctx.now()))))) {
    const answersBefore = ctx.learner.answers();
    const leftRead = await runRequest(ctx, halves.left, out, sample, timeout);
    const rightRead = await runRequest(ctx, halves.right, out, sample, timeout);
    if (leftRead && rightRead) {
      if (!timeout) ctx.learner.learnCut(request, halves.cut, reasonOf(err));
      else if (await timesOutAgain(ctx, request)) ctx.learner.learnMaxCount(request, halves.cut, reasonOf(err));
    } else if (timeout && ctx.learner.answers() === answersBefore) {
      ctx.learner.deviceSilent(ctx.now());
    }
    return false;
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

/** Re-sends a timed-out request whose halves were just served (its values came from the halves). */
async function timesOutAgain(ctx: CycleContext, request: ReadRequest): Promise<boolean> {
  if (ctx.learner.knowsShorterThan(request)) return false;
  try {
    await ctx.bus.read(ctx.unitId, request.table, request.start, request.count);
  } catch (err) {
    return err instanceof ModbusTimeoutError;
  }
  ctx.learner.answered(request);
  return false;
}

function decodeInto(ctx: CycleContext, request: ReadRequest, block: ReadBlock, out: CycleOutcome, sample: Sample): boolean {
  let all = true;
  for (const point of request.points) {
    try {
      const value = (ctx.codecs.get(point.id) as PointCodec).decode(block);
      if (value !== undefined) sample.values[point.id] = value;
    } catch (err) {
      all = false;
      sample.errors.push({ ...sampleErrorOf(request, err), points: [point.id] });
      out.failures.push(failureOf(point, err));
    }
  }
  return all;
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
