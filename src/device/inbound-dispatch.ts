// Inbound cloud messages of any number of devices: pushes, commands and stream data, each run
// against its device with at most `maxPending` at once per device. Over the limit a command is
// answered busy at once, and pushed points are read back once the device is free again. The
// entry takes a parsed message and a reply function, so any link (a device's own, or a
// gateway's on behalf of its sub-devices) can feed it. While a reload replaces a device its
// messages are held, and what still ran on the old parts is run again on the new ones.
import { COMMAND_ERRORS, type CommandService } from './commands.js';
import type { CloudValues } from './cloud-values.js';
import type { StreamRelay } from '../field/streams/relay.js';
import type { CommandErrorBody, Inbound, JsonObject } from '../cloud/mqtt/topics.js';
import type { Logger } from '../core/logger.js';

/** Sends the reply of one command back the way it came. */
export type CommandReplier = (command: { id: number; method: string }, result: { params: JsonObject } | { error: CommandErrorBody }) => void;

/** What a device offers to its inbound messages. */
export interface InboundTarget {
  /** `stamp`: the device's write order (write-sequencer.ts); a message's writes carry the stamp taken when it arrived. */
  values: Pick<CloudValues, 'apply' | 'correct' | 'knows'> & Partial<Pick<CloudValues, 'stamp'>>;
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

/** One unit of inbound work (a message, or a read-back after a busy episode), run against the device's parts of the moment. */
interface Job {
  kind: string;
  /** `live()` turns false once the run was abandoned (its device replaced): it must not answer then. */
  exec(target: InboundTarget, live: () => boolean): Promise<void>;
}

class DeviceInbound {
  readonly counters: InboundCounters = { pushes: 0, commands: 0, invalid: 0, refused: 0 };
  /** Jobs running now, each run its own entry (a job run again after a replacement is a new entry). */
  private readonly running = new Set<{ job: Job }>();
  /** Messages held while the device is replaced by a reload: run, in order, by its replacement. */
  private held: Job[] | undefined;
  private idleWaiters: Array<() => void> = [];
  /** Messages refused since the pending limit was last reached (logged once per episode). */
  private refusedInEpisode = 0;
  /** Known points of pushes refused while busy: read back once the episode ends. */
  private readonly uncorrected = new Set<string>();

  constructor(private target: InboundTarget, private readonly maxPending: number) {}

  get pending(): number {
    return this.running.size + (this.held?.length ?? 0);
  }

  accept(message: Inbound, reply: CommandReplier): void {
    if (this.pending >= this.maxPending) return this.refuseBusy(message, reply);
    this.count(message);
    // Stamped on arrival, before any hold: held or run again later, it still yields to what came after it.
    const stamp = this.target.values.stamp?.();
    const job: Job = { kind: message.kind === 'invalid' ? message.topic : message.kind, exec: (target, live) => this.handle(target, message, stamp, (c, r) => { if (live()) reply(c, r); }) };
    if (this.held) this.held.push(job);
    else this.run(job);
  }

  /** From now on messages wait (within the pending limit) for `resume`. */
  hold(): void {
    this.held ??= [];
  }

  /** Resolves once nothing runs (held messages do not count). */
  idle(): Promise<void> {
    if (this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * The device's replacement takes over: what still runs on the old parts is abandoned (it no
   * longer answers or reports) and runs again on the new ones, ahead of the held messages.
   * Returns how many jobs were run again.
   */
  resume(target: InboundTarget): number {
    const abandoned = [...this.running].map((r) => r.job);
    this.running.clear();
    // Whoever waits for the old parts to finish waits no longer: nothing runs on them now.
    this.wakeIdle();
    this.target = target;
    const queued = [...abandoned, ...(this.held ?? [])];
    this.held = undefined;
    for (const job of queued) this.run(job);
    return abandoned.length;
  }

  private count(message: Inbound): void {
    if (message.kind === 'attributes-push') this.counters.pushes += 1;
    else if (message.kind === 'command') this.counters.commands += 1;
    else if (message.kind === 'invalid') this.counters.invalid += 1;
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
    if (this.running.size === 0) this.wakeIdle();
    if (this.refusedInEpisode > 0 && this.pending === 0) {
      this.target.log.info({ refused: this.refusedInEpisode }, 'inbound messages accepted again');
      this.refusedInEpisode = 0;
      if (this.uncorrected.size > 0) {
        const ids = [...this.uncorrected];
        this.run({ kind: 'correction', exec: (target) => target.values.correct(ids, 'pushes refused while busy') });
      }
      this.uncorrected.clear();
    }
  }

  private wakeIdle(): void {
    if (this.running.size > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }

  private run(job: Job): void {
    const entry = { job };
    this.running.add(entry);
    const target = this.target;
    const live = () => this.running.has(entry);
    job.exec(target, live)
      .catch((err: unknown) => { if (live()) target.log.error({ kind: job.kind, err }, 'inbound message failed'); })
      .finally(() => { if (this.running.delete(entry)) this.settle(); });
  }

  private async handle(target: InboundTarget, message: Inbound, stamp: number | undefined, reply: CommandReplier): Promise<void> {
    const { values, commands, streams, log } = target;
    switch (message.kind) {
      case 'attributes-push':
        await values.apply(message.attributes, 'push', stamp);
        return;
      case 'command': {
        const outcome = await commands.runCommand(message.method, message.params, stamp);
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

  /** A reload replaces the device: its messages wait for `resume` (within its pending limit). */
  hold(deviceName: string): void {
    this.devices.get(deviceName)?.hold();
  }

  /** Resolves once none of the device's messages runs. */
  idle(deviceName: string): Promise<void> {
    return this.devices.get(deviceName)?.idle() ?? Promise.resolve();
  }

  /** The replacement's parts take over (see DeviceInbound.resume); how many jobs run again. */
  resume(deviceName: string, target: InboundTarget): number {
    const device = this.devices.get(deviceName);
    if (!device) {
      this.addDevice(deviceName, target);
      return 0;
    }
    return device.resume(target);
  }

  counters(deviceName: string): InboundCounters | undefined {
    return this.devices.get(deviceName)?.counters;
  }
}
