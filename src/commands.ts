// Cloud-to-device writes: attribute pushes, synced values and commands are checked against the
// point map before the bus is touched, encoded, written ahead of polls and read back.
import type { CommandConfig, CommandStep } from './config/command-types.js';
import type { DeviceConfig } from './config/site-types.js';
import type { Logger } from './log.js';
import { compilePoint, type PointCodec, type ReadBlock, type WriteOp } from './points/codec.js';
import type { PointValue, Table } from './points/types.js';

/** The bus operations of one device, run with write priority. */
export interface DeviceIo {
  read(table: Table, start: number, count: number): Promise<ReadBlock>;
  write(op: WriteOp): Promise<void>;
  sleep(ms: number): Promise<void>;
}

export interface ApplyResult {
  /** Point id -> the value read back from the device after the write. */
  applied: Record<string, PointValue>;
  /** Point id -> why it was refused before touching the bus. */
  rejected: Record<string, string>;
  /** Point id -> why the write or read-back failed on the bus. */
  failed: Record<string, string>;
}

export interface CommandError {
  code: number;
  message: string;
}

export type CommandOutcome = { ok: true; result: Record<string, unknown> } | { ok: false; error: CommandError };

/** Error codes in command replies (HTTP-like so a cloud user reads them without a table). */
export const COMMAND_ERRORS = {
  badParams: 400,
  unknownMethod: 404,
  invalidValue: 422,
  deviceFailed: 503,
  internal: 500,
} as const;

function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class CommandService {
  private readonly codecs = new Map<string, PointCodec>();
  private readonly commands = new Map<string, CommandConfig>();

  constructor(
    private readonly device: DeviceConfig,
    commands: readonly CommandConfig[],
    private readonly io: DeviceIo,
    private readonly logger: Logger,
  ) {
    for (const point of device.points) this.codecs.set(point.id, compilePoint(point));
    for (const command of commands) this.commands.set(command.method, command);
  }

  /** Checks one key/value against the point map without touching the bus (pure). */
  check(id: string, value: unknown): { ok: true; codec: PointCodec; write: WriteOp } | { ok: false; reason: string } {
    const codec = this.codecs.get(id);
    if (!codec) return { ok: false, reason: `unknown attribute "${id}" for device ${this.device.name}` };
    if (!codec.point.writable) return { ok: false, reason: `attribute "${id}" is not writable` };
    const encoded = codec.encode(value);
    return encoded.ok ? { ok: true, codec, write: encoded.write } : { ok: false, reason: encoded.error };
  }

  /** Writes every valid key (in the order given), then reads each one back. */
  async applyAttributes(values: Record<string, unknown>, source: string): Promise<ApplyResult> {
    const result: ApplyResult = { applied: {}, rejected: {}, failed: {} };
    const written: PointCodec[] = [];
    for (const [id, value] of Object.entries(values)) {
      const checked = this.check(id, value);
      if (!checked.ok) {
        result.rejected[id] = checked.reason;
        this.logger.warn({ device: this.device.name, attribute: id, source, reason: checked.reason }, 'cloud write refused');
        continue;
      }
      try {
        await this.io.write(checked.write);
        written.push(checked.codec);
      } catch (err) {
        result.failed[id] = describeError(err);
        this.logger.warn({ device: this.device.name, attribute: id, source, err }, 'cloud write failed on the bus');
      }
    }
    for (const codec of written) {
      try {
        result.applied[codec.point.id] = await this.readBack(codec);
      } catch (err) {
        result.failed[codec.point.id] = `written, but read-back failed: ${describeError(err)}`;
      }
    }
    return result;
  }

  private async readBack(codec: PointCodec): Promise<PointValue> {
    const { table, address } = codec.point;
    return codec.decode(await this.io.read(table, address, codec.width));
  }

  /** Runs `read`, `write` or a site-file command; never throws. */
  async runCommand(method: string, params: unknown): Promise<CommandOutcome> {
    try {
      if (method === 'read') return await this.builtinRead(params);
      if (method === 'write') return await this.builtinWrite(params);
      const command = this.commands.get(method);
      if (!command) {
        const known = ['read', 'write', ...this.commands.keys()].join(', ');
        return fail(COMMAND_ERRORS.unknownMethod, `unknown method "${method}" (known: ${known})`);
      }
      return await this.runSteps(command, params);
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
    const unknown = keys.filter((k) => !this.codecs.has(k));
    if (unknown.length > 0) return fail(COMMAND_ERRORS.invalidValue, `unknown attribute(s): ${unknown.join(', ')}`);
    const result: Record<string, PointValue> = {};
    try {
      for (const key of keys) result[key] = await this.readBack(this.codecs.get(key) as PointCodec);
    } catch (err) {
      return fail(COMMAND_ERRORS.deviceFailed, describeError(err));
    }
    return { ok: true, result };
  }

  private async builtinWrite(params: unknown): Promise<CommandOutcome> {
    if (!isObject(params) || Object.keys(params).length === 0) {
      return fail(COMMAND_ERRORS.badParams, 'write needs params {"<attribute>": value, ...}');
    }
    // All or nothing at validation time: a half-applied write command surprises operators.
    const problems = Object.entries(params).map(([id, v]) => [id, this.check(id, v)] as const).filter(([, c]) => !c.ok);
    if (problems.length > 0) {
      return fail(COMMAND_ERRORS.invalidValue, problems.map(([id, c]) => (c.ok ? id : c.reason)).join('; '));
    }
    const applied = await this.applyAttributes(params, 'command');
    const failures = Object.entries(applied.failed);
    if (failures.length > 0) return fail(COMMAND_ERRORS.deviceFailed, failures.map(([id, why]) => `${id}: ${why}`).join('; '));
    return { ok: true, result: applied.applied };
  }

  private resolveValue(step: { value: unknown } | { param: string }, params: Record<string, unknown>): unknown {
    return 'param' in step ? params[step.param] : step.value;
  }

  private async runSteps(command: CommandConfig, rawParams: unknown): Promise<CommandOutcome> {
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
      for (const step of command.steps) await this.runStep(step, params, result);
    } catch (err) {
      return fail(COMMAND_ERRORS.deviceFailed, describeError(err));
    }
    return { ok: true, result };
  }

  private async runStep(step: CommandStep, params: Record<string, unknown>, result: Record<string, unknown>): Promise<void> {
    switch (step.kind) {
      case 'write':
      case 'pulse': {
        const checked = this.check(step.point, this.resolveValue(step, params));
        if (!checked.ok) throw new Error(checked.reason);
        await this.io.write(checked.write);
        if (step.kind === 'pulse') {
          await this.io.sleep(step.ms);
          const restore = this.check(step.point, step.restore);
          if (!restore.ok) throw new Error(restore.reason);
          await this.io.write(restore.write);
        }
        return;
      }
      case 'read':
        for (const id of step.points) result[id] = await this.readBack(this.codecs.get(id) as PointCodec);
        return;
      case 'delay':
        await this.io.sleep(step.ms);
        return;
    }
  }
}

function fail(code: number, message: string): CommandOutcome {
  return { ok: false, error: { code, message } };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
