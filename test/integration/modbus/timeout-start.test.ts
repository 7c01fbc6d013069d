// A request's timeout starts when its last byte has left the line (issue 39), not at its first:
// at 1200 baud 8E1 an FC16 write of 123 registers (255 bytes) takes about 2.3 s on the wire, so
// a 300 ms timeout counted from the first byte would expire long before the unit could answer.
// The socat pty carries the bytes at once (no baud), so the device (trap-peer.ts) answers 1300 ms
// after the request came: within the wire time plus the timeout, well beyond the timeout alone.
import { afterEach, describe, expect, it } from 'vitest';
import { ModbusTimeoutError } from '../../../src/field/modbus/errors.js';
import { rtuBusConfig } from '../../helpers/bus-configs.js';
import { UNIT, settle, startLateRig } from '../../helpers/late-path-rig.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const TIMEOUT_MS = 300;
const ANSWER_AFTER_MS = 1300;

async function rig() {
  return startLateRig(cleanups, TIMEOUT_MS, { answer: () => ({ afterMs: ANSWER_AFTER_MS }) }, (path) => rtuBusConfig({
    path, baudRate: 1200, timeoutMs: TIMEOUT_MS, interFrameDelayMs: 2, cooldown: { afterTimeouts: 5, initialMs: 1000, maxMs: 1000 },
  }));
}

describe('the reply timeout starts after the request\'s last byte', () => {
  it('a long write at a low baud: answered after the timeout but within its wire time plus the timeout', async () => {
    const { bus, peer } = await rig();
    const values = Array.from({ length: 123 }, (_, i) => i);
    await bus.writeRegisters(UNIT, 0, values);
    expect(peer.requests).toMatchObject([{ functionCode: 16, quantity: 123 }]);
    expect(bus.stats()).toMatchObject({ timeouts: 0, lateReplies: 0 });
  }, 30_000);

  it('hostile: a short write (73 ms on the wire) answered as late still times out', async () => {
    const { bus } = await rig();
    expect(await settle(bus.writeRegisters(UNIT, 0, [7]))).toBeInstanceOf(ModbusTimeoutError);
    expect(bus.stats().timeouts).toBe(1);
  }, 30_000);
});
