// A share's read cache (`cacheMs`), kept true by the bus it shares: every read the bus answers
// fills it, every write that finishes forgets the range it may have changed.
import type { ShareConfig } from '../core/config/share.js';
import { ReadCache } from '../core/modbus/read-cache.js';
import type { Bus } from '../field/modbus/bus.js';

export interface BusReadCache {
  /** Undefined when the share caches nothing (`cacheMs: 0`). */
  cache: ReadCache | undefined;
  /** Stops following the bus (the share stops). */
  stop: () => void;
}

export function busReadCache(bus: Pick<Bus, 'onSettled'>, config: Pick<ShareConfig, 'cacheMs'>): BusReadCache {
  if (config.cacheMs <= 0) return { cache: undefined, stop: () => undefined };
  const cache = new ReadCache();
  // Failed or not: a write whose reply was lost (a timeout, the usual case on a noisy line) has
  // most likely been applied.
  const stop = bus.onSettled((unit, op, outcome, at) => {
    if (op.kind === 'read') {
      if (outcome.ok && outcome.result && !Buffer.isBuffer(outcome.result)) cache.record({ unit, ...outcome.result, at });
    } else if (op.kind === 'write-registers') cache.forget(unit, 'holding', op.address, op.address + op.values.length - 1);
    else if (op.kind === 'write-coils') cache.forget(unit, 'coil', op.address, op.address + op.values.length - 1);
    else if (op.kind === 'write-bit') cache.forget(unit, 'holding', op.address, op.address);
    else if (op.kind === 'broadcast') {
      const table = op.write.kind === 'write-coils' ? 'coil' : 'holding';
      cache.forget('every', table, op.write.address, op.write.address + op.write.values.length - 1);
    }
  });
  return { cache, stop };
}
