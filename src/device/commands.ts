// Cloud-to-device commands: the built-in `read` and `write` and the site file's commands, checked
// against the point map before the bus is touched, run with write priority, never throwing.
import { applyAttributes, type CheckResult } from './attribute-writes.js';
import type { CommandConfig, CommandStep } from '../core/config/command-types.js';
import type { CompiledDevice } from '../core/config/compile.js';
import type { DeviceConfig } from '../core/config/site-types.js';
import {
  ABSENT_KEY, type ApplyResult, COMMAND_ERRORS, type CommandOutcome, type DeviceIo, describeError, describeFailures, firstNames,
} from '../core/device-write-types.js';
import type { Logger } from '../core/logger.js';
import type { LearnedReadLimits } from '../core/modbus/plan.js';
import { RetirableIo } from './device-io.js';
import { type PointReadResult, readPoints } from './point-reads.js';
import type { PointCodec, WriteOp } from '../core/points/codec.js';
import { WriteSequencer, type WriteOutcome } from './write-sequencer.js';

export type { ApplyResult, CommandError, CommandOutcome, DeviceIo } from '../core/device-write-types.js';
export { ABSENT_KEY, COMMAND_ERRORS } from '../core/device-write-types.js';

export class CommandService {
  private readonly device: DeviceConfig;
  private readonly codecs: ReadonlyMap<string, PointCodec>;
  private readonly commands = new Map<string, CommandConfig>();
  private readonly io: RetirableIo;

  constructor(
    compiled: CompiledDevice,
    commands: readonly CommandConfig[],
    io: DeviceIo,
    private readonly logger: Logger,
    /** The poller's learned limits for this device, now (read-plan-learner.ts), so commands plan like polls. */
    private readonly learned: () => LearnedReadLimits = () => ({}),
    /** The device's one write path, shared by every command path the device has had (write-sequencer.ts). */
    private readonly sequencer: WriteSequencer = new WriteSequencer(compiled.config.name, logger),
  ) {
    this.device = compiled.config;
    this.codecs = compiled.codecs;
    this.io = new RetirableIo(io, compiled.config.name);
    for (const command of commands) this.commands.set(command.method, command);
  }

  /** The device was replaced by a reload: from now on this path refuses every bus operation. */
  retire(): void {
    this.io.retire();
  }

  /** A stamp for writes decided now (a message received, a sync's read sent): later ones win over it. */
  stampWrite(): number {
    return this.sequencer.stamp();
  }

  /** Writes of the device that were not a sync's, since start (the cloud's stored values lack them until reported). */
  writesNotSynced(): number {
    return this.sequencer.counters.notSynced;
  }

  /** One point's write through the device's write path: dropped when a later write of the point came first. */
  private writePoint(id: string, op: WriteOp, stamp: number, synced = false): Promise<WriteOutcome> {
    return this.sequencer.write(id, stamp, () => this.io.write(op), { yields: synced });
  }

  /** Checks one key/value against the point map without touching the bus (pure). */
  check(id: string, value: unknown): CheckResult {
    const codec = this.codecs.get(id);
    if (!codec) return { ok: false, reason: `unknown attribute "${id}" for device ${this.device.name}` };
    if (!codec.point.writable) return { ok: false, reason: `attribute "${id}" is not writable` };
    const encoded = codec.encode(value);
    return encoded.ok ? { ok: true, codec, write: encoded.write } : { ok: false, reason: encoded.error };
  }

  /**
   * Writes every valid key (in the order given), then reads back written and refused points.
   * `stamp`: when the values were decided (stampWrite); now when not given. `synced`: the cloud's
   * stored values (interface B), which give way to writes of their points already under way.
   */
  applyAttributes(values: Record<string, unknown>, source: string, stamp = this.stampWrite(), synced = false): Promise<ApplyResult> {
    return applyAttributes(
      {
        device: this.device, codecs: this.codecs, io: this.io, logger: this.logger, learned: this.learned, check: (id, v) => this.check(id, v),
        write: (id, op) => this.writePoint(id, op, stamp, synced),
      },
      values, source,
    );
  }

  /** Reads the known points among `ids` (planned like a poll), e.g. to correct the cloud. */
  readBack(ids: Iterable<string>): Promise<PointReadResult> {
    return readPoints(this.io, this.codecs, ids, this.device.limits, this.learned());
  }

  knows(id: string): boolean {
    return this.codecs.has(id);
  }

  /** Runs `read`, `write` or a site-file command; never throws. `stamp`: when it was received (stampWrite); now when not given. */
  async runCommand(method: string, params: unknown, stamp = this.stampWrite()): Promise<CommandOutcome> {
    try {
      if (method === 'read') return await this.builtinRead(params);
      if (method === 'write') return await this.builtinWrite(params, stamp);
      const command = this.commands.get(method);
      if (!command) {
        const known = ['read', 'write', ...this.commands.keys()].join(', ');
        return fail(COMMAND_ERRORS.unknownMethod, `unknown method "${method}" (known: ${known})`);
      }
      return await this.runSteps(command, params, stamp);
    } catch (err) {
      this.logger.error({ device: this.device.name, method, err }, 'command failed unexpectedly');
      return fail(COMMAND_ERRORS.internal, describeError(err));
    }
  }

  private async builtinRead(params: unknown): Promise<CommandOutcome> {
    const keys = isObject(params) && Array.isArray(params.keys) ? params.keys : undefined;
    if (!keys || !keys.every((k): k is string => typeof k === 'string')) {
      return fail(COMMAND_ERRORS.badParams, 'read needs params {"keys": ["<attribute>", ...]}');
    }
    const unique = [...new Set(keys)];
    const unknown = unique.filter((k) => !this.codecs.has(k));
    if (unknown.length > 0) return fail(COMMAND_ERRORS.invalidValue, `unknown attribute(s): ${firstNames(unknown)}`);
    // A key listed many times is read once, and neighbours share a request, as in a poll.
    // Only the asked points come back: the scale factors read along stay out of the result.
    const read = await readPoints(this.io, this.codecs, unique, this.device.limits, this.learned());
    if (Object.keys(read.failed).length > 0) return fail(COMMAND_ERRORS.deviceFailed, describeFailures(read.failed));
    const result: Record<string, unknown> = { ...read.values };
    addAbsent(result, read);
    return { ok: true, result };
  }

  private async builtinWrite(params: unknown, stamp: number): Promise<CommandOutcome> {
    if (!isObject(params) || Object.keys(params).length === 0) {
      return fail(COMMAND_ERRORS.badParams, 'write needs params {"<attribute>": value, ...}');
    }
    // All or nothing at validation time: a half-applied write command surprises operators.
    const problems: string[] = [];
    for (const [id, value] of Object.entries(params)) {
      const checked = this.check(id, value);
      if (!checked.ok) problems.push(checked.reason);
    }
    if (problems.length > 0) {
      const more = problems.length > 5 ? `; and ${problems.length - 5} more` : '';
      return fail(COMMAND_ERRORS.invalidValue, problems.slice(0, 5).join('; ') + more);
    }
    const applied = await this.applyAttributes(params, 'command', stamp);
    if (Object.keys(applied.failed).length > 0) return fail(COMMAND_ERRORS.deviceFailed, describeFailures(applied.failed));
    return { ok: true, result: applied.applied };
  }

  private resolveValue(step: { value: unknown } | { param: string }, params: Record<string, unknown>): unknown {
    return 'param' in step ? params[step.param] : step.value;
  }

  private async runSteps(command: CommandConfig, rawParams: unknown, stamp: number): Promise<CommandOutcome> {
    const params = isObject(rawParams) ? rawParams : {};
    const missing = command.requiredParams.filter((p) => !(p in params));
    if (missing.length > 0) return fail(COMMAND_ERRORS.badParams, `missing params: ${missing.join(', ')}`);
    // Validate every write before the first one, so a bad value never leaves a half-run sequence.
    for (const step of command.steps) {
      if (step.kind !== 'write' && step.kind !== 'pulse') continue;
      const checked = this.check(step.point, this.resolveValue(step, params));
      if (!checked.ok) return fail(COMMAND_ERRORS.invalidValue, checked.reason);
      if (step.kind === 'pulse') {
        const restore = this.check(step.point, step.restore);
        if (!restore.ok) return fail(COMMAND_ERRORS.invalidValue, restore.reason);
      }
    }
    const result: Record<string, unknown> = {};
    try {
      for (const step of command.steps) await this.runStep(step, params, result, stamp);
    } catch (err) {
      return fail(COMMAND_ERRORS.deviceFailed, describeError(err));
    }
    return { ok: true, result };
  }

  /** A write step dropped for a later write of its point is skipped: the device holds the later value. */
  private async runStep(step: CommandStep, params: Record<string, unknown>, result: Record<string, unknown>, stamp: number): Promise<void> {
    switch (step.kind) {
      case 'write':
      case 'pulse': {
        const checked = this.check(step.point, this.resolveValue(step, params));
        if (!checked.ok) throw new Error(checked.reason);
        await this.writePoint(step.point, checked.write, stamp);
        if (step.kind === 'pulse') {
          await this.io.sleep(step.ms);
          const restore = this.check(step.point, step.restore);
          if (!restore.ok) throw new Error(restore.reason);
          await this.writePoint(step.point, restore.write, stamp);
        }
        return;
      }
      case 'read': {
        const read = await readPoints(this.io, this.codecs, step.points, this.device.limits, this.learned());
        const failed = Object.entries(read.failed)[0];
        if (failed) throw new Error(`${failed[0]}: ${failed[1]}`);
        Object.assign(result, read.values);
        addAbsent(result, read);
        return;
      }
      case 'delay':
        await this.io.sleep(step.ms);
        return;
    }
  }
}

/** Each asked point the device gave no value, with why, under one key that no point id can take. */
function addAbsent(result: Record<string, unknown>, read: PointReadResult): void {
  if (Object.keys(read.absent).length === 0) return;
  result[ABSENT_KEY] = { ...(result[ABSENT_KEY] as Record<string, string> | undefined), ...read.absent };
}

function fail(code: number, message: string): CommandOutcome {
  return { ok: false, error: { code, message } };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
