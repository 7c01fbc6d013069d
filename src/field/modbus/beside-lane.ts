// Modbus TCP: a unit that timed out does not hold its neighbours back again. Until it answers, its
// requests go on the wire beside the others instead of taking one of the bus's `maxInFlight`
// slots (matched by transaction id, like any request), so with `maxInFlight: 1` a late or
// stale-id unit costs its neighbours its timeout once, not once per request. One such request at
// a time per bus. A server that does not serve requests side by side (a request sent beside one
// timed out, or the replies went out of step) turns this off for the life of the bus: then the
// unit's timeouts queue as before and its cool-down bounds them. RTU lines have no transaction id
// and never use it.
import type { Logger } from '../../core/logger.js';
import { ModbusExceptionError, ModbusFrameError, ModbusTimeoutError } from './errors.js';

export class BesideLane {
  /** Units whose last request timed out (or a gateway found silent) and that have not answered since. */
  private readonly silentUnits = new Set<number>();
  private enabled: boolean;
  private besideInFlight = 0;

  constructor(isTcp: boolean, private readonly log: Logger) {
    this.enabled = isTcp;
  }

  /** In flight now beside the slots (0 or 1). */
  get inFlight(): number {
    return this.besideInFlight;
  }

  /** Whether a request to `unit` goes beside the slots (its unit timed out and the server allows it). */
  takes(unit: number): boolean {
    return this.enabled && this.silentUnits.has(unit);
  }

  /** Whether such a request could start now. */
  get free(): boolean {
    return this.besideInFlight === 0;
  }

  /** A request goes on the wire now: its lane is noted on it (beside, while one is beside, or neither). */
  start(job: { unit: number; lane?: 'beside' | 'while-beside' }): void {
    job.lane = this.takes(job.unit) ? 'beside' : this.besideInFlight > 0 ? 'while-beside' : undefined;
    if (job.lane === 'beside') this.besideInFlight += 1;
  }

  finish(job: { lane?: 'beside' | 'while-beside' }): void {
    if (job.lane === 'beside') this.besideInFlight -= 1;
    job.lane = undefined;
  }

  answered(unit: number): void {
    this.silentUnits.delete(unit);
  }

  /**
   * A request of `unit` failed. `sentWhileBeside`: it went out while a request was beside the
   * slots. Its timeout then tells that the server waited for that one (it serves one at a time),
   * a malformed reply that the stream went out of step (a unit's garbage failed the others on
   * the wire): either way nothing goes beside any more.
   */
  failed(unit: number, err: unknown, sentWhileBeside: boolean): void {
    if (!this.enabled) return;
    const silent = err instanceof ModbusTimeoutError || (err instanceof ModbusExceptionError && err.isGatewayNoResponse);
    if (sentWhileBeside && (silent || err instanceof ModbusFrameError)) {
      this.enabled = false;
      this.silentUnits.clear();
      this.log.warn({ unit, reason: err instanceof Error ? err.message : String(err) },
        'bus server does not serve requests side by side: timed-out units no longer go beside the others');
      return;
    }
    // Garbage may put the stream out of step, failing whatever else is on the wire: not beside.
    if (silent) this.silentUnits.add(unit);
    else this.silentUnits.delete(unit);
  }
}
