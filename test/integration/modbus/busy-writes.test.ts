// Writes to a busy unit (issue 41), against a raw device on a socat pty (trap-peer.ts): cloud work
// (a write, its read-back) answered "busy" (exception 6) repeats, off the line, while its next
// attempt starts within its own deadline (`writes.maxWaitMs`), not only `busyRetries` times; a
// poll keeps its `busyRetries`. Past the deadline the write fails with the device's answer. After
// "acknowledge" (exception 5) the repeat is the poll for completion, spaced a request timeout.
import { afterEach, describe, expect, it } from 'vitest';
import { rtuBusConfig } from '../../helpers/bus-configs.js';
import { settle, startLateRig, UNIT } from '../../helpers/late-path-rig.js';
import type { TrapAnswer, TrapRequest } from '../../helpers/trap-peer.js';
import { ModbusExceptionError } from '../../../src/field/modbus/errors.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const ADDRESS = 40;
const TIMEOUT_MS = 300;

/** "busy" to every request until `busyForMs` after the first one, then the normal answer. */
function busyFor(busyForMs: number): (r: TrapRequest) => TrapAnswer {
  let firstAt: number | undefined;
  return (r) => {
    firstAt ??= r.at;
    return r.at - firstAt < busyForMs ? { afterMs: 0, exception: 6 } : { afterMs: 0 };
  };
}

describe('a write to a unit answering "busy"', () => {
  it('busy for 2.5 s (longer than busyRetries\' 3 pauses of 200, 400, 600 ms): the write is repeated within its deadline and lands', async () => {
    const { bus, peer } = await startLateRig(cleanups, TIMEOUT_MS, { answer: busyFor(2500) });
    await bus.writeRegisters(UNIT, ADDRESS, [1234]);
    expect(await bus.read(UNIT, 'holding', ADDRESS, 1, { priority: 'high' })).toEqual({ table: 'holding', start: ADDRESS, words: Uint16Array.from([1234]) });
    const writes = peer.requests.filter((r) => r.functionCode === 6);
    expect(writes.length).toBeGreaterThan(4); // more than the first attempt and its 3 busy repeats
    expect(bus.stats().busyRetries).toBe(writes.length - 1);
    expect(bus.stats().exceptions).toBe(0);
  }, 30_000);

  it('busy past its deadline (writes.maxWaitMs 4 s): it fails with the device\'s exception 6, its last attempt inside the deadline', async () => {
    const { bus, peer } = await startLateRig(cleanups, TIMEOUT_MS, { answer: () => ({ afterMs: 0, exception: 6 }) },
      (path) => rtuBusConfig({ path, timeoutMs: TIMEOUT_MS, interFrameDelayMs: 2, writes: { maxWaitMs: 4000 } }));
    const error = await settle(bus.writeRegisters(UNIT, ADDRESS, [1]));
    expect(error).toBeInstanceOf(ModbusExceptionError);
    expect((error as ModbusExceptionError).code).toBe(6);
    const writes = peer.requests.filter((r) => r.functionCode === 6);
    // Pauses of 200, 400, 600, 800, 1000 ms: attempts up to 3 s in; the next would start after the deadline.
    expect(writes.length).toBeGreaterThan(4);
    expect((writes.at(-1) as TrapRequest).at - (writes[0] as TrapRequest).at).toBeLessThan(4000);
  }, 30_000);

  it('"acknowledge" (exception 5) twice: the identical write is the poll for completion, at most one a request timeout, and lands', async () => {
    let acks = 0;
    const answer = (r: TrapRequest): TrapAnswer => (r.functionCode === 6 && acks++ < 2 ? { afterMs: 0, exception: 5 } : { afterMs: 0 });
    const { bus, peer } = await startLateRig(cleanups, TIMEOUT_MS, { answer });
    await bus.writeRegisters(UNIT, ADDRESS, [77]);
    const writes = peer.requests.filter((r) => r.functionCode === 6);
    expect(writes).toHaveLength(3);
    for (let i = 1; i < writes.length; i += 1) expect((writes[i] as TrapRequest).at - (writes[i - 1] as TrapRequest).at).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(bus.stats()).toMatchObject({ busyRetries: 2, exceptions: 0 });
  }, 30_000);

  it('a poll answered "busy" keeps busyRetries (3): 4 attempts, then the unit\'s exception', async () => {
    const { bus, peer } = await startLateRig(cleanups, TIMEOUT_MS, { answer: () => ({ afterMs: 0, exception: 6 }) });
    const error = await settle(bus.read(UNIT, 'holding', ADDRESS, 2));
    expect((error as ModbusExceptionError).code).toBe(6);
    expect(peer.requests).toHaveLength(4);
  }, 30_000);
});
