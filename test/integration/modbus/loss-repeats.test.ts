// The bus under loss (issue 41), against a raw device on a socat pty (trap-peer.ts): a read that
// timed out is repeated once, identically, before the sample is given up; a late reply of another
// read of the same function and length never becomes a value, also after its guard ran out; "seen
// answering late" is forgotten after enough answers in time; a frame lost right after a unit stayed
// busy is repeated like any other (the unit answered: busy is no timeout in a row).
import { afterEach, describe, expect, it } from 'vitest';
import type { Table } from '../../../src/core/points/types.js';
import { ModbusTimeoutError } from '../../../src/field/modbus/errors.js';
import { type LossScript, runLostFrames } from '../../helpers/lost-frames.js';
import { UNIT, X, Y, settle, startLateRig, truthWords as truth } from '../../helpers/late-path-rig.js';
import type { TrapAnswer, TrapRequest } from '../../helpers/trap-peer.js';
import { waitFor } from '../../helpers/wait.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a read that timed out is repeated identically', () => {
  it('5 % random loss (RTU, timeout 300 ms, 500 ms polls): at most 2 % of samples lost, no wrong value', async () => {
    // Seed 7 loses requests 4, 59, 125, 136, 137 ... of the first 240 (two in a row among them).
    const result = await runLostFrames({ lose: { rate: 0.05, seed: 7 }, samples: 200, minLost: 5, pollIntervalMs: 500, timeoutMs: 300 });
    expect(result.lostFrames).toBeGreaterThanOrEqual(5);
    expect(result.wrongValues).toBe(0);
    expect(result.samplesLost / (result.samples + result.samplesLost)).toBeLessThanOrEqual(0.02);
    expect(result.stats.timeoutRepeats).toBeGreaterThanOrEqual(5);
    expect(result.offlineTransitions).toEqual([]);
  }, 240_000);

  it('the repeat of a read answered late takes the first copy\'s answer: its own registers, the other copy counted late', async () => {
    const { bus } = await startLateRig(cleanups, 300, { answer: (r) => ({ afterMs: r.address === Y ? 450 : 0 }) }, undefined, 1);
    expect(await bus.read(UNIT, 'input', Y, 2)).toEqual({ table: 'input', start: Y, words: truth(Y, 2) });
    expect(await bus.read(UNIT, 'input', X, 2)).toEqual({ table: 'input', start: X, words: truth(X, 2) });
    await waitFor(() => bus.stats().lateReplies === 1, { what: 'the second copy\'s answer counted late' });
    expect(bus.stats()).toMatchObject({ timeoutRepeats: 1, timeouts: 1 });
  }, 30_000);

  it('timeoutRepeats: 0 gives the sample up at the first timeout', async () => {
    const { bus, peer } = await startLateRig(cleanups, 300, { answer: (r) => (r.address === Y ? 'silent' : { afterMs: 0 }) }, undefined, 0);
    expect(await settle(bus.read(UNIT, 'input', Y, 2))).toBeInstanceOf(ModbusTimeoutError);
    expect(peer.requests.filter((r) => r.address === Y)).toHaveLength(1);
  }, 30_000);
});

describe.each(['holding', 'input'] as const)('a late reply of another %s read of the same length', (table: Table) => {
  it('that comes after its guard ran out, before the unit answered that read again: never a value', async () => {
    // Y is lost (both copies). Once the bus's guard of Y has run out, the device's late answer to Y
    // comes as the next request of Y's shape (another address) is on the line, unless the device
    // has answered Y again since (it answers in order). X must get its own registers.
    let armed = false;
    let replayed = 0;
    const answer = (r: TrapRequest): TrapAnswer => {
      if (r.address === Y && !armed) return 'silent';
      if (r.address === Y) {
        armed = false; // answered Y again: its earlier reply can no longer come
        return { afterMs: 0 };
      }
      if (armed && r.quantity === 2) {
        replayed += 1;
        armed = false;
        return { afterMs: 0, valuesOf: Y };
      }
      return { afterMs: 0 };
    };
    const { bus } = await startLateRig(cleanups, 300, { answer }, undefined, 1);
    expect(await settle(bus.read(UNIT, table, Y, 2))).toBeInstanceOf(ModbusTimeoutError);
    await waitFor(() => bus.lateUnits().every((u) => u.guardedUntil === undefined), { what: 'the guard of Y run out', timeoutMs: 15_000 });
    armed = true;
    expect(await bus.read(UNIT, table, X, 2)).toEqual({ table, start: X, words: truth(X, 2) });
    expect(await bus.read(UNIT, table, Y, 2)).toEqual({ table, start: Y, words: truth(Y, 2) });
    expect(await bus.read(UNIT, table, X, 2)).toEqual({ table, start: X, words: truth(X, 2) });
    expect(replayed).toBe(0);
  }, 40_000);
});

describe('"seen answering late" decays', () => {
  it('a unit that answered late once, then in time: a frame lost much later costs at most 2 samples', async () => {
    let lostAt = Number.POSITIVE_INFINITY;
    const script: LossScript = (request, index) => {
      if (index === 3) return { afterMs: 450 }; // late once (timeout 300 ms)
      if (index === 40) {
        lostAt = request.at;
        return 'silent';
      }
      return { afterMs: 0 };
    };
    const result = await runLostFrames({
      lose: { script }, samples: 60, pollIntervalMs: 500, timeoutMs: 300,
      // The repeat would hide what the guard costs: without it the lost frame costs a timeout, and a guard only if still "seen late".
      bus: { timeoutRepeats: 0, lateSeenForgetAfterAnswers: 20 },
      done: (samples) => samples.filter((s) => s.ts > lostAt).length >= 12,
    });
    expect(result.stats.lateReplies).toBe(1);
    expect(result.wrongValues).toBe(0);
    const times = result.sampleTimes;
    const from = times.findIndex((ts) => ts > lostAt) - 1;
    let lost = 0;
    for (let i = Math.max(1, from + 1); i < times.length; i += 1) lost += Math.max(0, Math.round(((times[i] as number) - (times[i - 1] as number)) / 500) - 1);
    expect(lost).toBeLessThanOrEqual(2);
  }, 120_000);
});

describe('a frame lost right after a unit stayed "busy" to every repeat', () => {
  // Requests 5-8: exception 6 (the read and its 3 busy repeats: that sample is given up), then
  // the next poll's read lost once, or twice (the read and its repeat). RTU at the defaults.
  it.each([
    ['once', 1],
    ['twice in a row', 2],
  ] as const)('lost %s: at most 3 samples lost to it, no cool-down', async (_name, losses) => {
    let lostAt = Number.POSITIVE_INFINITY;
    const script: LossScript = (request, index) => {
      if (index >= 5 && index <= 8) return { afterMs: 0, exception: 6 };
      if (index >= 9 && index < 9 + losses) {
        lostAt = Math.min(lostAt, request.at);
        return 'silent';
      }
      return { afterMs: 0 };
    };
    const result = await runLostFrames({
      lose: { script }, samples: 30, minLost: losses, done: (samples) => samples.filter((s) => s.ts > lostAt).length >= 12,
    });
    expect(result.wrongValues).toBe(0);
    expect(result.stats.busyRetries).toBe(3);
    expect(result.stats.timeoutRepeats).toBe(1);
    expect(result.stats.cooldownRejects).toBe(0);
    // The busy sample is one slot; the lost frame may cost 3 more at most (slots a late cycle
    // skipped on a busy machine are the machine's, not the loss's).
    expect(result.poll.failedCycles).toBeLessThanOrEqual(1 + 3);
    expect(result.samplesLost).toBeLessThanOrEqual(1 + 3 + result.poll.skippedCycles);
  }, 120_000);
});

describe('"acknowledge" (exception 5), then silence while the unit works', () => {
  it('silent for 2 s after it (RTU, timeout 300 ms, 500 ms polls): only the silent slots are lost, no cool-down, no offline spell', async () => {
    // The unit accepted a long request (Modbus Application Protocol 1.1b3, section 7: returned to
    // prevent a timeout in the client) and ignores requests for 2 s meanwhile: 4 poll slots.
    const SILENT_MS = 2000;
    let ackAt = Number.POSITIVE_INFINITY;
    const script: LossScript = (request, index) => {
      if (index === 5) {
        ackAt = request.at;
        return { afterMs: 0, exception: 5 };
      }
      return request.at > ackAt && request.at - ackAt < SILENT_MS ? 'silent' : { afterMs: 0 };
    };
    const result = await runLostFrames({
      lose: { script }, samples: 40, minLost: 1, pollIntervalMs: 500, timeoutMs: 300,
      done: (samples) => samples.filter((s) => s.ts > ackAt + SILENT_MS).length >= 20,
    });
    expect(result.wrongValues).toBe(0);
    expect(result.stats.cooldownRejects).toBe(0);
    expect(result.offlineTransitions).toEqual([]);
    // Only the silent slots fail; a slot skipped because a cycle ran late on a busy machine is no
    // loss of the silence's (it failed once with 10 missing slots at load 5, none of them failed).
    expect(result.poll.failedCycles).toBeLessThanOrEqual(SILENT_MS / 500 + 1);
    expect(result.samplesLost).toBeLessThanOrEqual(SILENT_MS / 500 + 1 + result.poll.skippedCycles);
  }, 120_000);
});
