// Which sub-devices' reports the cloud refuses (`gateway/attributes/response` with result 0, e.g.
// errcode 404 for an address not bound to the identity): counted per device, and one warning when
// a device starts being refused, one line when it is accepted again, never one per batch. The
// PUBACK already acknowledged those reports (the outbox does not grow): this is how a wrong binding
// shows. Answers come in the order the batches were sent on one connection, so each answer is
// matched to the oldest batch not answered yet; an answer naming addresses that batch did not carry
// shows the cloud does not answer every batch, and acceptance is then no longer inferred until the
// next connect (refusals still count, by the addresses they name).
import type { Logger } from '../core/logger.js';

/** Batches remembered while waiting for their answer; a cloud that never answers costs no more. */
const MAX_UNANSWERED = 256;

export interface SubDeviceCloudStatus {
  /** The device's address among the identity's sub-devices. */
  address: string;
  /** Reports the cloud answered as refused since start. */
  reportsRefused: number;
  /** The cloud refused its last answered report. */
  refused: boolean;
}

interface DeviceState {
  reportsRefused: number;
  refused: boolean;
}

export class SubDeviceRefusals {
  private readonly devices = new Map<string, DeviceState>();
  private unanswered: Array<readonly string[]> = [];
  private aligned = true;

  /** `nameOf`: the sub-device an address belongs to now (undefined: none of ours). */
  constructor(private readonly log: Logger, private readonly nameOf: (address: string) => string | undefined) {}

  /** A `gateway/attributes` batch carrying these addresses was published. */
  batchSent(addresses: readonly string[]): void {
    if (!this.aligned) return;
    if (this.unanswered.length >= MAX_UNANSWERED) this.unanswered.shift();
    this.unanswered.push(addresses);
  }

  /** A connect or disconnect: answers to batches of the old connection never come. */
  reset(): void {
    this.unanswered = [];
    this.aligned = true;
  }

  /** One answer on `gateway/attributes/response`; `named`: the addresses a refusal names. */
  answer(accepted: boolean, named: readonly string[], errcode: number, reason: string): void {
    let batch = this.aligned ? this.unanswered.shift() : undefined;
    if (!accepted && batch && named.length > 0 && !named.every((a) => batch?.includes(a))) {
      this.aligned = false;
      this.unanswered = [];
      batch = undefined;
    }
    const refused = accepted ? [] : named.length > 0 ? named : (batch ?? []);
    for (const address of refused) this.refuse(address, errcode, reason);
    const refusedSet = new Set(refused);
    for (const address of batch ?? []) if (!refusedSet.has(address)) this.accept(address);
  }

  status(name: string, address: string): SubDeviceCloudStatus {
    const state = this.devices.get(name);
    return { address, reportsRefused: state?.reportsRefused ?? 0, refused: state?.refused ?? false };
  }

  /** A device removed from the site: its figures go with it. */
  forget(name: string): void {
    this.devices.delete(name);
  }

  private refuse(address: string, errcode: number, reason: string): void {
    const device = this.nameOf(address);
    if (device === undefined) return;
    const state = this.stateOf(device);
    state.reportsRefused += 1;
    if (state.refused) return;
    state.refused = true;
    this.log.warn({ device, subDevice: address, errcode, reason }, 'cloud refuses the reports of a sub-device');
  }

  private accept(address: string): void {
    const device = this.nameOf(address);
    const state = device === undefined ? undefined : this.devices.get(device);
    if (!state?.refused) return;
    state.refused = false;
    this.log.info({ device, subDevice: address, reportsRefused: state.reportsRefused }, 'cloud accepts the reports of a sub-device again');
  }

  private stateOf(device: string): DeviceState {
    let state = this.devices.get(device);
    if (!state) {
      state = { reportsRefused: 0, refused: false };
      this.devices.set(device, state);
    }
    return state;
  }
}
