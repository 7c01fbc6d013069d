// Commands on fieldgate's own identity: `status`, a remote commissioning `read`, `poll` (one
// device now) and a temporary `log_level`. Each is validated before anything is done and always
// answered; none runs a shell. The `site_*` methods (remote configuration) are ops/remote-site.ts's.
import type { SelfCommandLimits } from '../../core/config/self-identity.js';
import { describeValue } from '../../core/config/issues.js';
import { COMMAND_ERRORS, type CommandOutcome, describeError, firstNames } from '../../core/device-write-types.js';
import { compilePoint, nthPoint, type ReadBlock } from '../../core/points/codec.js';
import type { PointValue, Table } from '../../core/points/types.js';
import { QueueFullError } from '../../core/queue-full-error.js';
import type { SelfCommand } from '../../core/self-channel.js';
import type { TimeWithWall } from '../../core/time.js';
import { TokenBucket } from '../../cloud/forwarding/pacer.js';
import { ModbusEngineError } from '../../field/modbus/errors.js';
import type { Sample } from '../../device/poll-cycle.js';
import { LOG_LEVELS, type Logger } from '../../core/logger.js';
import { statusCommandResult, type SelfSample } from './attributes.js';
import type { TemporaryLogLevel } from './log-level.js';
import { parseReadParams, type ReadableBus, type RemoteRead } from './read-params.js';

/** A bus as a remote read needs it: a read taken in the bus's turn at the given priority. */
export interface RemoteReadBus extends ReadableBus {
  read(unit: number, table: Table, start: number, count: number, options: { priority: 'high'; signal?: AbortSignal }): Promise<ReadBlock>;
}

export interface SelfCommandDeps {
  limits: SelfCommandLimits;
  sample(): SelfSample;
  buses: ReadonlyMap<string, RemoteReadBus>;
  /** Configured device names, in site order. */
  devices: readonly string[];
  /** Runs one poll cycle of the device now (its sample also goes the usual way to the cloud). */
  pollDevice(device: string): Promise<Sample>;
  logLevel: TemporaryLogLevel;
  /** Monotonic for the rate bucket; wall for a temporary log level's end as shown. */
  time: TimeWithWall;
  log: Logger;
  /** The remote site commands (ops/remote-site.ts); absent: fieldgate runs without a generation store. */
  site?: SiteCommands;
}

/** What answers the `site_*` methods. */
export interface SiteCommands {
  handle(method: string, params: Record<string, unknown>): Promise<CommandOutcome>;
}

export const SELF_METHODS = ['status', 'read', 'poll', 'log_level'] as const;
const SITE_METHOD_NAMES: readonly string[] = ['site_get', 'site_check', 'site_apply', 'site_confirm', 'site_rollback', 'site_history'];
/** Sample errors a `poll` reply lists at most. */
const ERRORS_SHOWN = 20;
/** Levels the cloud may choose: not `silent`, which would hide the revert too. */
const SETTABLE_LEVELS = LOG_LEVELS.filter((level) => level !== 'silent');

function fail(code: number, message: string): CommandOutcome {
  return { ok: false, error: { code, message } };
}

function onlyParams(params: Record<string, unknown>, known: readonly string[]): string | undefined {
  const unknown = Object.keys(params).filter((key) => !known.includes(key));
  if (unknown.length === 0) return undefined;
  return `unknown param(s) ${firstNames(unknown.map(describeValue))} (known: ${known.join(', ') || 'none'})`;
}

export class SelfCommands {
  private pending = 0;
  private readonly bucket: TokenBucket;

  constructor(private readonly deps: SelfCommandDeps) {
    const perMinute = deps.limits.readsPerMinute;
    this.bucket = new TokenBucket(perMinute / 60, perMinute);
  }

  /** Answers one command; never throws. More than `maxPending` at once are answered busy. */
  async handle(command: SelfCommand): Promise<CommandOutcome> {
    const limit = this.deps.limits.maxPending;
    if (this.pending >= limit) return fail(COMMAND_ERRORS.busy, `gateway busy: more than ${limit} commands pending`);
    this.pending += 1;
    try {
      return await this.run(command);
    } catch (err) {
      this.deps.log.error({ method: command.method, id: command.id, err }, 'own command failed unexpectedly');
      return fail(COMMAND_ERRORS.internal, describeError(err));
    } finally {
      this.pending -= 1;
    }
  }

  private run(command: SelfCommand): Promise<CommandOutcome> | CommandOutcome {
    const { method, params } = command;
    switch (method) {
      case 'status': {
        const extra = onlyParams(params, []);
        return extra ? fail(COMMAND_ERRORS.badParams, extra) : { ok: true, result: statusCommandResult(this.deps.sample()) };
      }
      case 'read':
        return this.read(params, command.signal);
      case 'poll':
        return this.poll(params);
      case 'log_level':
        return this.setLogLevel(params);
      default: {
        const { site } = this.deps;
        if (site && SITE_METHOD_NAMES.includes(method)) return site.handle(method, params);
        const known = site ? [...SELF_METHODS, ...SITE_METHOD_NAMES] : SELF_METHODS;
        return fail(COMMAND_ERRORS.unknownMethod, `unknown method ${describeValue(method)} (known: ${known.join(', ')})`);
      }
    }
  }

  /** Reads and polls share one bucket: each takes a token once its params are valid. */
  private rateLimited(): CommandOutcome | undefined {
    const waitMs = this.bucket.delayFor(this.deps.time.now());
    if (waitMs === 0) return undefined;
    const perMinute = this.deps.limits.readsPerMinute;
    return fail(COMMAND_ERRORS.busy, `rate limited: at most ${perMinute} reads and polls per minute; retry in ${Math.ceil(waitMs / 1000)} s`);
  }

  private async read(params: Record<string, unknown>, signal: AbortSignal | undefined): Promise<CommandOutcome> {
    const parsed = parseReadParams(params, this.deps.buses, this.deps.limits);
    if (!parsed.ok) return fail(COMMAND_ERRORS.badParams, parsed.message);
    const limited = this.rateLimited();
    if (limited) return limited;
    const { read } = parsed;
    const bus = this.deps.buses.get(read.bus);
    if (!bus) return fail(COMMAND_ERRORS.internal, `bus ${read.bus} vanished`);
    let block: ReadBlock;
    try {
      // 'high' is the cloud's priority: ahead of polls within the bus's cloud share.
      block = await bus.read(read.unit, read.table, read.address, read.count, { priority: 'high', ...(signal ? { signal } : {}) });
    } catch (err) {
      return fail(err instanceof QueueFullError ? COMMAND_ERRORS.busy : COMMAND_ERRORS.deviceFailed, describeError(err));
    }
    this.deps.log.info({ bus: read.bus, unit: read.unit, table: read.table, address: read.address, count: read.count }, 'remote read done');
    return { ok: true, result: readResult(read, block) };
  }

  private async poll(params: Record<string, unknown>): Promise<CommandOutcome> {
    const extra = onlyParams(params, ['device']);
    if (extra) return fail(COMMAND_ERRORS.badParams, extra);
    const device = params.device;
    const known = firstNames(this.deps.devices);
    if (typeof device !== 'string') return fail(COMMAND_ERRORS.badParams, `device must be a device name (known: ${known}) (got ${describeValue(device)})`);
    if (!this.deps.devices.includes(device)) return fail(COMMAND_ERRORS.invalidValue, `unknown device ${describeValue(device)} (known: ${known})`);
    const limited = this.rateLimited();
    if (limited) return limited;
    let sample: Sample;
    try {
      sample = await this.deps.pollDevice(device);
    } catch (err) {
      if (err instanceof ModbusEngineError || err instanceof QueueFullError) return fail(COMMAND_ERRORS.deviceFailed, describeError(err));
      throw err;
    }
    const errors = sample.errors.slice(0, ERRORS_SHOWN).map((e) => ({ points: firstNames(e.points), table: e.table, start: e.start, count: e.count, kind: e.kind, message: e.message }));
    return { ok: true, result: { device, ts: new Date(sample.ts).toISOString(), values: sample.values, errors, errorCount: sample.errors.length } };
  }

  private setLogLevel(params: Record<string, unknown>): CommandOutcome {
    const extra = onlyParams(params, ['level', 'durationS']);
    if (extra) return fail(COMMAND_ERRORS.badParams, extra);
    const { level, durationS } = params;
    if (typeof level !== 'string' || !(SETTABLE_LEVELS as readonly string[]).includes(level)) {
      return fail(COMMAND_ERRORS.badParams, `level must be one of ${SETTABLE_LEVELS.join(', ')} (got ${describeValue(level)})`);
    }
    const maxS = this.deps.limits.logLevelMaxMs / 1000;
    if (typeof durationS !== 'number' || !Number.isFinite(durationS) || durationS <= 0 || durationS > maxS) {
      return fail(COMMAND_ERRORS.badParams, `durationS must be a number of seconds above 0 and at most ${maxS} (got ${describeValue(durationS)})`);
    }
    const set = this.deps.logLevel.set(level, Math.round(durationS * 1000));
    return { ok: true, result: { level: set.level, previous: set.previous, revertsAt: new Date(set.revertsAt).toISOString() } };
  }
}

/** Raw registers (or bits as 0/1) and, with a type, the decoded values with their addresses. */
function readResult(read: RemoteRead, block: ReadBlock): Record<string, unknown> {
  const raw = block.words ? Array.from(block.words) : (block.bits ?? []).map((bit) => (bit ? 1 : 0));
  const result: Record<string, unknown> = { bus: read.bus, unit: read.unit, table: read.table, address: read.address, raw };
  const point = read.point;
  if (!point) return result;
  // Ad-hoc reads never carry a "not implemented" value, so null only guards the type.
  const values: { address: number; value: PointValue | null }[] = [];
  for (let index = 0; index < read.values; index += 1) {
    const at = nthPoint(point, index);
    values.push({ address: at.address, value: compilePoint(at).decode(block) ?? null });
  }
  result.type = point.type;
  result.values = values;
  return result;
}
