// Pure policy of a share: which TCP unit reaches which bus unit, and what a client may ask of it.
// Refusals carry the exception the Modbus standard names: no path (0x0A) for a unit the share does
// not reach, illegal function (0x01) for a function not allowed, illegal data address (0x02) for
// an address outside the unit's allowed ranges. TCP unit 0, unless mapped, is the broadcast: no path
// unless `allowBroadcast`, and then writes only (a read is an illegal function).
import type { ShareConfig } from '../config/share.js';
import { EXCEPTION, isWrite, requestSpan, type ShareRequest } from './mbap-request.js';

/** `broadcast`: a write to every unit of the line (bus unit 0), no reply awaited. */
export type PolicyDecision = { ok: true; busUnit: number; broadcast?: true } | { ok: false; exception: number; reason: string };

export interface SharePolicy {
  decide(tcpUnit: number, request: ShareRequest): PolicyDecision;
  /** TCP unit -> bus unit, for status. */
  readonly units: ReadonlyMap<number, number>;
}

/** `busUnits`: the units of the bus's devices, reached as themselves when the share maps none. */
export function sharePolicy(share: ShareConfig, busUnits: readonly number[]): SharePolicy {
  const units = new Map<number, number>(share.units ? share.units.map((u) => [u.tcp, u.bus]) : busUnits.map((u) => [u, u]));
  const rules = new Map((share.policy ?? []).map((p) => [p.unit, p]));
  return {
    units,
    decide(tcpUnit, request) {
      const broadcast = tcpUnit === 0 && !units.has(0);
      if (broadcast && !share.allowBroadcast) return { ok: false, exception: EXCEPTION.gatewayPathUnavailable, reason: 'broadcast not allowed' };
      // A read has no meaning as a broadcast (nobody answers it): the function, not the path, is wrong.
      if (broadcast && !isWrite(request)) return { ok: false, exception: EXCEPTION.illegalFunction, reason: 'a broadcast can only write' };
      const busUnit = broadcast ? 0 : units.get(tcpUnit);
      if (busUnit === undefined) return { ok: false, exception: EXCEPTION.gatewayPathUnavailable, reason: 'unit not shared' };
      if (isWrite(request) && share.access === 'read-only') return { ok: false, exception: EXCEPTION.illegalFunction, reason: 'read-only share' };
      const rule = rules.get(tcpUnit);
      if (rule?.functions && !rule.functions.includes(request.functionCode)) {
        return { ok: false, exception: EXCEPTION.illegalFunction, reason: 'function not allowed' };
      }
      if (rule?.ranges) {
        const span = requestSpan(request);
        const inside = rule.ranges.some((r) => (r.table === undefined || r.table === span.table) && r.from <= span.first && span.last <= r.to);
        if (!inside) return { ok: false, exception: EXCEPTION.illegalDataAddress, reason: 'address not allowed' };
      }
      return broadcast ? { ok: true, busUnit, broadcast } : { ok: true, busUnit };
    },
  };
}
