// Before a device named by profile is polled: does it identify as that profile's model? Checked
// at the first cycle and again after the device was offline (a reconnect, a power cycle, a meter
// swapped). Another model is not polled and is checked again each cycle; a device whose points read
// but whose identification registers are refused or unanswered is polled with a warning
// (unverified); a device answering nothing is offline, and is checked when it answers.
import { describeVerdict, judgeIdentification, readIdentifications, type IdentificationReader, type IdentifyVerdict } from '../core/config/identification-match.js';
import type { DeviceIdentification } from '../core/config/site-types.js';
import type { Logger } from '../core/logger.js';
import { keptFromDevice, ModbusExceptionError } from '../field/modbus/errors.js';
import type { PollBus } from './poll-cycle.js';

/** identified: it is its profile's model; other-model: it is not (not polled); unverified: it did not say (polled). */
export type IdentityState = 'identified' | 'other-model' | 'unverified';

export interface IdentityStatus {
  state: IdentityState;
  /** The profile(s) the site names. */
  profiles: string[];
  /** Other-model: the library's profiles whose identification the device matches (empty: none known). */
  identifiedAs?: string[];
  /** What the device said, for other-model and unverified. */
  detail?: string;
}

export class DeviceIdentityError extends Error {}

/** `notAsked` is set when a read never reached the device: its silence says nothing about it. */
function busReader(bus: PollBus, unitId: number, notAsked: { seen: boolean }): IdentificationReader {
  return async (table, address, count) => {
    try {
      const block = await bus.read(unitId, table, address, count);
      return { kind: 'words', words: Array.from(block.words ?? []) };
    } catch (err) {
      if (err instanceof ModbusExceptionError) return { kind: 'refused', detail: err.exceptionName };
      if (keptFromDevice(err)) notAsked.seen = true;
      return { kind: 'silent', detail: err instanceof Error ? err.message : String(err) };
    }
  };
}

export class IdentityCheck {
  private pending = true;
  private current: IdentityStatus | undefined;
  /** This cycle's identification got no answer at all. */
  private silent: IdentifyVerdict | undefined;

  constructor(private readonly identification: DeviceIdentification, private readonly log: Logger) {}

  status(): IdentityStatus | undefined {
    return this.current;
  }

  /** The device went offline: check again when it answers next. */
  recheck(): void {
    this.pending = true;
  }

  /** Before a cycle: undefined to poll, or the error that keeps this (other) model from being polled. */
  async beforeCycle(bus: PollBus, unitId: number): Promise<DeviceIdentityError | undefined> {
    this.silent = undefined;
    if (!this.pending) return undefined;
    const { registers, others, profiles } = this.identification;
    const notAsked = { seen: false };
    const answerOf = await readIdentifications(registers, busReader(bus, unitId, notAsked));
    const verdict = judgeIdentification({ registers }, answerOf);
    if (verdict.kind === 'unknown' && verdict.why === 'silent') {
      // Nothing said yet: offline (the poll will say so) or only these registers unanswered (afterCycle
      // decides). A read the bus kept from the device decides nothing: asked again next cycle.
      if (!notAsked.seen) this.silent = verdict;
      return undefined;
    }
    const identifiedAs = verdict.kind === 'mismatch' ? others.filter((o) => judgeIdentification({ registers: o.registers }, answerOf).kind === 'match').map((o) => o.name) : undefined;
    this.pending = verdict.kind === 'mismatch';
    this.update(verdict, profiles, identifiedAs);
    if (verdict.kind !== 'mismatch') return undefined;
    const as = identifiedAs && identifiedAs.length > 0 ? `as ${identifiedAs.join(' or ')}` : 'as another model';
    return new DeviceIdentityError(`identifies ${as}, not ${profiles.join(' + ')}: not polled (${describeVerdict(verdict)}); set identify: false on the device if it is right`);
  }

  /**
   * After the cycle: a device whose identification registers went unanswered but whose points read
   * is polled as unverified (not asked again until it was offline); one that read nothing is asked again.
   */
  afterCycle(gotValues: boolean): void {
    if (!this.silent || !gotValues) return;
    this.pending = false;
    this.update(this.silent, this.identification.profiles, undefined);
    this.silent = undefined;
  }

  private update(verdict: IdentifyVerdict, profiles: string[], identifiedAs: string[] | undefined): void {
    const state: IdentityState = verdict.kind === 'match' ? 'identified' : verdict.kind === 'mismatch' ? 'other-model' : 'unverified';
    const detail = verdict.kind === 'match' ? undefined : describeVerdict(verdict);
    const changed = this.current?.state !== state || this.current?.identifiedAs?.join() !== identifiedAs?.join();
    this.current = { state, profiles, ...(identifiedAs ? { identifiedAs } : {}), ...(detail ? { detail } : {}) };
    if (!changed) return;
    const profile = profiles.join(' + ');
    if (state === 'identified') this.log.info({ profile }, 'device identified as its profile\'s model');
    else if (state === 'other-model') this.log.warn({ profile, identifiedAs: identifiedAs ?? [], detail }, 'device identifies as another model: not polled');
    else this.log.warn({ profile, detail }, 'device did not identify itself: polled as its profile');
  }
}
