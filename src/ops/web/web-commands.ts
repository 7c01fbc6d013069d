// The page's read, poll and scan forms. Read and poll are the own device's commands (ops/self),
// same checks, same rate limit shape, through the running buses' scheduler at the cloud's
// priority, so polls keep their share. A scan asks each unit of a range for one holding register,
// one unit at a time, one scan at a time. A read or scan whose page request closed (`signal`)
// stops: what it still had waiting leaves the bus queue.
import { describeValue } from '../../core/config/issues.js';
import type { SelfCommandLimits } from '../../core/config/self-identity.js';
import { COMMAND_ERRORS, describeError, type CommandOutcome } from '../../core/device-write-types.js';
import type { TimeWithWall } from '../../core/time.js';
import { ModbusExceptionError, ModbusTimeoutError, RequestCancelledError, UnitCoolingDownError } from '../../field/modbus/errors.js';
import type { Logger } from '../log.js';
import { SelfCommands } from '../self/commands.js';
import { TemporaryLogLevel, type LevelControl } from '../self/log-level.js';
import type { RemoteReadParts } from '../self/wiring.js';
import type { GatewayStatus } from '../status.js';
import type { CommandService } from '../../device/commands.js';

export interface ScanFinding {
  unit: number;
  /** Answered with a value, or with an exception (present, but register 0 refused). */
  answer: 'value' | 'exception';
  detail: string;
  answerMs: number;
}

export class WebCommands {
  private readonly commands: SelfCommands;
  private scanning = false;
  private nextId = 1;

  constructor(private readonly parts: RemoteReadParts, private readonly writers: ReadonlyMap<string, CommandService>, limits: SelfCommandLimits, status: () => GatewayStatus, level: LevelControl, private readonly time: TimeWithWall, private readonly log: Logger,
    /** Units one scan may ask (gateway.web.maxScanUnits); each silent one costs the bus's timeout. */
    private readonly maxScanUnits: number) {
    this.commands = new SelfCommands({
      limits, buses: parts.buses, devices: parts.devices, pollDevice: (device) => parts.pollDevice(device),
      sample: () => ({ status: status(), rssBytes: process.memoryUsage.rss(), at: time.now() }),
      logLevel: new TemporaryLogLevel(level, time, log), time, log,
    });
  }

  read(params: Record<string, unknown>, signal?: AbortSignal): Promise<CommandOutcome> {
    return this.commands.handle({ id: this.nextId++, method: 'read', params, ...(signal ? { signal } : {}) });
  }

  poll(params: Record<string, unknown>): Promise<CommandOutcome> {
    return this.commands.handle({ id: this.nextId++, method: 'poll', params });
  }

  /**
   * Writes points of a device as a cloud push does (each key checked against the point map and
   * encoded before the bus is touched, at write priority, then read back). The caller checks
   * web.allowWrites.
   */
  async write(params: Record<string, unknown>): Promise<CommandOutcome> {
    const { device, values } = params;
    const writer = typeof device === 'string' ? this.writers.get(device) : undefined;
    if (!writer) return { ok: false, error: { code: COMMAND_ERRORS.badParams, message: `device must be one of ${[...this.writers.keys()].join(', ')} (got ${describeValue(device)})` } };
    if (typeof values !== 'object' || values === null || Array.isArray(values) || Object.keys(values).length === 0) {
      return { ok: false, error: { code: COMMAND_ERRORS.badParams, message: 'values must be a mapping of point ids to values' } };
    }
    const result = await writer.applyAttributes(values as Record<string, unknown>, 'web');
    this.log.info({ device, applied: Object.keys(result.applied), rejected: Object.keys(result.rejected), failed: Object.keys(result.failed) }, 'page write done');
    return { ok: true, result: { device, ...result } };
  }

  async scan(params: Record<string, unknown>, signal?: AbortSignal): Promise<CommandOutcome> {
    const { bus: name, from, to } = params;
    const bus = typeof name === 'string' ? this.parts.buses.get(name) : undefined;
    if (!bus) return { ok: false, error: { code: COMMAND_ERRORS.badParams, message: `bus must be one of ${[...this.parts.buses.keys()].join(', ')} (got ${describeValue(name)})` } };
    const [low, high] = bus.kind === 'tcp' ? [0, 255] : [1, 247];
    if (!Number.isInteger(from) || !Number.isInteger(to) || (from as number) < low || (to as number) > high || (from as number) > (to as number) || (to as number) - (from as number) >= this.maxScanUnits) {
      return { ok: false, error: { code: COMMAND_ERRORS.badParams, message: `from and to must be unit ids ${low}..${high}, from <= to, at most ${this.maxScanUnits} units` } };
    }
    if (this.scanning) return { ok: false, error: { code: COMMAND_ERRORS.busy, message: 'a scan is already running' } };
    this.scanning = true;
    const found: ScanFinding[] = [];
    try {
      for (let unit = from as number; unit <= (to as number); unit++) {
        if (signal?.aborted === true) return pageClosed(unit);
        const started = this.time.now();
        try {
          const block = await bus.read(unit, 'holding', 0, 1, { priority: 'high', ...(signal ? { signal } : {}) });
          found.push({ unit, answer: 'value', detail: `holding 0 = ${block.words?.[0] ?? '?'}`, answerMs: this.time.now() - started });
        } catch (err) {
          // Silent, or resting after earlier silences: nobody at this id now.
          if (err instanceof ModbusTimeoutError || err instanceof UnitCoolingDownError) continue;
          if (err instanceof RequestCancelledError) return pageClosed(unit);
          if (!(err instanceof ModbusExceptionError)) return { ok: false, error: { code: COMMAND_ERRORS.deviceFailed, message: `scan stopped at unit ${unit}: ${describeError(err)}` } };
          found.push({ unit, answer: 'exception', detail: err.message, answerMs: this.time.now() - started });
        }
      }
    } finally {
      this.scanning = false;
    }
    this.log.info({ bus: name, from, to, found: found.length }, 'page scan done');
    return { ok: true, result: { bus: name, from, to, found } };
  }
}

/** The page request of a scan closed: nobody reads the answer, the scan asks no further unit. */
function pageClosed(unit: number): CommandOutcome {
  return { ok: false, error: { code: COMMAND_ERRORS.deviceFailed, message: `scan stopped at unit ${unit}: the page request closed` } };
}
