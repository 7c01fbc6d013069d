// Inbound cloud messages of any number of devices: pushes, commands and stream data, each run
// against its device with at most `maxPending` at once per device. Over the limit a command is
// answered busy at once, and pushed points are read back once the device is free again. The
// entry takes a parsed message and a reply function, so any link (a device's own, or a
// gateway's on behalf of its sub-devices) can feed it.
import { COMMAND_ERRORS, type CommandService } from './commands.js';
import type { CloudValues } from './cloud-values.js';
import type { StreamRelay } from '../field/streams/relay.js';
import type { CommandErrorBody, Inbound, JsonObject } from '../cloud/mqtt/topics.js';
import type { Logger } from '../core/logger.js';

/** Sends the reply of one command back the way it came. */
export type CommandReplier = (command: { id: number; method: string }, result: { params: JsonObject } | { error: CommandErrorBody }) => void;

/** What a device offers to its inbound messages. */
export interface InboundTarget {
  values: Pick<CloudValues, 'apply' | 'correct' | 'knows'>;
  commands: Pick<CommandService, 'runCommand'>;
  streams: ReadonlyMap<string, Pick<StreamRelay, 'send'>>;
  log: Logger;
}

export interface InboundCounters {
  pushes: number;
  commands: number;
  invalid: number;
  refused: number;
}

class DeviceInbound {
  readonly counters: InboundCounters = { pushes: 0, commands: 0, invalid: 0, refused: 0 };
  private pending = 0;
  /** Messages refused since the pending limit was last reached (logged once per episode). */
  private refusedInEpisode = 0;
  /** Known points of pushes refused while busy: read back once the episode ends. */
  private readonly uncorrected = new Set<string>();

  constructor(private readonly target: InboundTarget, private readonly maxPending: number) {}

  accept(message: Inbound, reply: CommandReplier): void {
    if (this.pending >= this.maxPending) return this.refuseBusy(message, reply);
    this.track(this.handle(message, reply), message.kind === 'invalid' ? message.topic : message.kind);
  }

  /** Over the pending limit: every command (malformed ones too) is answered busy at once. */
  private refuseBusy(message: Inbound, reply: CommandReplier): void {
    this.counters.refused += 1;
    if (this.refusedInEpisode === 0) this.target.log.warn({ kind: message.kind, pending: this.pending, limit: this.maxPending }, 'inbound messages refused: too many pending');
    this.refusedInEpisode += 1;
    const command = message.kind === 'command' ? message : message.kind === 'invalid' ? message.command : undefined;
    if (command) reply(command, { error: { code: COMMAND_ERRORS.busy, message: `gateway busy: more than ${this.maxPending} messages pending for this device` } });
    const pushed = message.kind === 'attributes-push' ? Object.keys(message.attributes) : message.kind === 'invalid' ? message.pushKeys : undefined;
    for (const id of pushed ?? []) if (this.target.values.knows(id)) this.uncorrected.add(id);
  }

  private settle(): void {
    this.pending -= 1;
    if (this.refusedInEpisode > 0 && this.pending === 0) {
      this.target.log.info({ refused: this.refusedInEpisode }, 'inbound messages accepted again');
      this.refusedInEpisode = 0;
      if (this.uncorrected.size > 0) this.track(this.target.values.correct([...this.uncorrected], 'pushes refused while busy'));
      this.uncorrected.clear();
    }
  }

  private track(work: Promise<void>, kind?: string): void {
    this.pending += 1;
    work.catch((err: unknown) => this.target.log.error({ kind, err }, 'inbound message failed')).finally(() => this.settle());
  }

  private async handle(message: Inbound, reply: CommandReplier): Promise<void> {
    const { values, commands, streams, log } = this.target;
    switch (message.kind) {
      case 'attributes-push':
        this.counters.pushes += 1;
        await values.apply(message.attributes, 'push');
        return;
      case 'command': {
        this.counters.commands += 1;
        const outcome = await commands.runCommand(message.method, message.params);
        reply(message, outcome.ok ? { params: outcome.result } : { error: outcome.error });
        return;
      }
      case 'data-set': {
        const relay = streams.get(message.identifier);
        if (!relay) return void log.warn({ stream: message.identifier }, 'data for an unconfigured stream dropped');
        await relay.send(message.bytes).catch((err: unknown) => log.warn({ stream: message.identifier, err }, 'stream data not delivered'));
        return;
      }
      case 'attributes-get-response':
        return;
      case 'invalid':
        this.counters.invalid += 1;
        log.warn({ topic: message.topic, reason: message.reason }, 'invalid inbound message');
        if (message.command) reply(message.command, { error: { code: COMMAND_ERRORS.badParams, message: message.reason } });
        if (message.pushKeys) {
          const known = message.pushKeys.filter((id) => values.knows(id));
          if (known.length > 0) await values.correct(known, 'push refused: too many keys');
        }
        return;
    }
  }
}

export class InboundDispatch {
  private readonly devices = new Map<string, DeviceInbound>();

  constructor(private readonly options: { maxPendingPerDevice: number; log: Logger }) {}

  addDevice(name: string, target: InboundTarget): void {
    this.devices.set(name, new DeviceInbound(target, this.options.maxPendingPerDevice));
  }

  /** Runs one parsed message for `deviceName`; false (and logged) when no such device was added. */
  dispatch(deviceName: string, message: Inbound, reply: CommandReplier): boolean {
    const device = this.devices.get(deviceName);
    if (!device) {
      this.options.log.warn({ device: deviceName, kind: message.kind }, 'inbound message for an unknown device dropped');
      return false;
    }
    device.accept(message, reply);
    return true;
  }

  counters(deviceName: string): InboundCounters | undefined {
    return this.devices.get(deviceName)?.counters;
  }
}
