// Slow, late and busy hostile units (issue 18), shared by the RTU, RTU-over-TCP and Modbus TCP
// peers: when the hostile unit answers a read, and with what. A late reply always carries wrong
// values (0xBAD0), so a late frame taken for the answer to a newer request shows as a wrong value.

export const SLOW_MODES = ['late-silent', 'late-answering', 'busy-forever', 'alternating-late'] as const;
export type SlowMode = (typeof SLOW_MODES)[number];

export function isSlowMode(mode: string): mode is SlowMode {
  return (SLOW_MODES as readonly string[]).includes(mode);
}

/** What the hostile unit does with one read. */
export type SlowAction =
  /** Wrong values after `afterMs` (a reply that comes after the master's timeout). */
  | { kind: 'late'; afterMs: number }
  | { kind: 'good' }
  /** Nothing: the unit is still working on an earlier request and hears nothing. */
  | { kind: 'ignore' }
  | { kind: 'exception'; code: number };

/** Per hostile unit (per connection on TCP): whether a late reply is still due, and reads seen. */
export interface SlowState {
  lateDueAt: number;
  reads: number;
}

export const slowState = (): SlowState => ({ lateDueAt: 0, reads: 0 });

/**
 * - late-silent: answers `lateMs` after the request, with wrong values; hears nothing meanwhile.
 * - late-answering: the same, but answers requests that come meanwhile at once (truthfully), so
 *   the late frame and a good reply may arrive close together.
 * - busy-forever: exception 6 to every read.
 * - alternating-late: every other read is answered `lateMs` late (wrong values), the others at once.
 */
export function slowAction(mode: SlowMode, state: SlowState, lateMs: number, now: number): SlowAction {
  state.reads += 1;
  const lateDue = state.lateDueAt > now;
  const late = (): SlowAction => {
    state.lateDueAt = now + lateMs;
    return { kind: 'late', afterMs: lateMs };
  };
  switch (mode) {
    case 'late-silent': return lateDue ? { kind: 'ignore' } : late();
    case 'late-answering': return lateDue ? { kind: 'good' } : late();
    case 'busy-forever': return { kind: 'exception', code: 6 };
    case 'alternating-late': return state.reads % 2 === 1 ? late() : { kind: 'good' };
  }
}
