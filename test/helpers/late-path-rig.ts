// The late-path rig of issue 28: a Bus on one end of a socat pty pair and a raw, scriptable RTU
// device (trap-peer.ts) on the other. A read of unit 1 at address Y (2 registers) times out and is
// answered late; meanwhile a request of the same unit, function and length at address X is on the
// line. Whatever path X took, it must get X's own values and the late frame must be counted once.
import type { BusConfig } from '../../src/core/config/site-types.js';
import { Bus } from '../../src/field/modbus/bus.js';
import { createModbusTransport } from '../../src/field/modbus/transport.js';
import { silentLogger } from '../../src/ops/log.js';
import { rtuBusConfig } from './bus-configs.js';
import { startPtyPair } from './socat.js';
import { startTrapPeer, type TrapAnswer, type TrapPeer, type TrapPeerOptions, type TrapRequest, truthOf } from './trap-peer.js';
import { waitFor } from './wait.js';

export const UNIT = 1;
/** The request on the line (X) and the one whose reply comes late (Y): same unit, function and length. */
export const X = 0;
export const Y = 50;

export interface LateRig {
  bus: Bus;
  peer: TrapPeer;
  /** The master's end of the pty pair. */
  path: string;
}

/**
 * Starts the pty pair, the device and the bus (pushing their stops on `cleanups`). `config`: the
 * bus's config for the master's pty path (default: an RTU bus with `timeoutMs`).
 */
export async function startLateRig(cleanups: Array<() => Promise<void>>, timeoutMs: number, peerOptions: TrapPeerOptions,
  config?: (path: string) => BusConfig, repeats = 0): Promise<LateRig> {
  const pair = await startPtyPair();
  cleanups.push(() => pair.stop());
  const peer = await startTrapPeer(pair.b, peerOptions);
  cleanups.push(() => peer.stop());
  const bus = new Bus({
    // No repeat after a timeout unless asked (timeoutRepeats): Y's late reply is then due while X is on the line.
    config: config?.(pair.a) ?? rtuBusConfig({
      path: pair.a, timeoutMs, interFrameDelayMs: 2, cooldown: { afterTimeouts: 5, initialMs: 1000, maxMs: 1000 }, timeoutRepeats: repeats,
    }),
    transportFactory: createModbusTransport, logger: silentLogger(), busyBackoffMs: 200,
  });
  cleanups.push(() => bus.stop());
  bus.start();
  await waitFor(() => bus.stats().state === 'up', { what: 'bus up' });
  return { bus, peer, path: pair.a };
}

export interface ScriptOptions {
  /** X is answered "busy" (exception 6) the first time. */
  busyFirst?: boolean;
  /** X (and anything else but Y) is answered this long after it came (default at once). */
  otherAfterMs?: number;
}

/** Y is answered `lateMs` after it came; X as `options` says; the rest at once. */
export function lateScript(lateMs: number, options: ScriptOptions = {}): (r: TrapRequest, i: number) => TrapAnswer {
  let busySent = false;
  return (request) => {
    if (request.address === Y) return { afterMs: lateMs };
    if (options.busyFirst && request.address === X && !busySent) {
      busySent = true;
      return { afterMs: 0, exception: 6 };
    }
    return { afterMs: options.otherAfterMs ?? 0 };
  };
}

/** The registers unit 1 really holds from `address` on. */
export const truthWords = (address: number, count: number): Uint16Array => Uint16Array.from({ length: count }, (_, i) => truthOf(UNIT, address + i));

/** A promise's value or its error, never a rejection. */
export const settle = <T>(promise: Promise<T>): Promise<T | unknown> => promise.then((v) => v, (err: unknown) => err);
