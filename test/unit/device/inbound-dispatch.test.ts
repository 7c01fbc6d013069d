// The inbound dispatch as a gateway link will use it: messages for several devices through one
// entry, each device with its own pending limit, replies through the function given; while a
// reload replaces a device its messages wait, and what ran on the old parts runs again on the new.
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../../src/device/commands.js';
import { InboundDispatch, type CommandReplier, type InboundTarget } from '../../../src/device/inbound-dispatch.js';
import type { Inbound } from '../../../src/cloud/mqtt/topics.js';
import { captureLogger } from '../../helpers/capture-logger.js';

/** A device whose commands finish only when released. */
function heldDevice(log: InboundTarget['log']) {
  const releases: Array<() => void> = [];
  const applied: Array<Record<string, unknown>> = [];
  const corrected: string[][] = [];
  const values = {
    apply: async (v: Record<string, unknown>) => void applied.push(v),
    correct: async (ids: readonly string[]) => void corrected.push([...ids]),
    knows: (id: string) => id === 'setpoint',
  };
  const commands = {
    runCommand: (method: string): Promise<CommandOutcome> => new Promise((resolve) => {
      releases.push(() => resolve({ ok: true, result: { method } }));
    }),
  };
  const target: InboundTarget = { values, commands, streams: new Map(), log };
  return { target, applied, corrected, release: () => releases.splice(0).forEach((r) => r()) };
}

const command = (id: number): Inbound => ({ kind: 'command', method: 'm', params: {}, id, topicId: String(id) });
const settled = () => new Promise((r) => setImmediate(r));

describe('inbound dispatch', () => {
  it('keeps one pending limit per device and answers each through its own reply function', async () => {
    const capture = captureLogger();
    const dispatch = new InboundDispatch({ maxPendingPerDevice: 2, log: capture.logger });
    const a = heldDevice(capture.logger);
    const b = heldDevice(capture.logger);
    dispatch.addDevice('a', a.target);
    dispatch.addDevice('b', b.target);
    const replies: Array<{ device: string; id: number; result: unknown }> = [];
    const replyFor = (device: string): CommandReplier => (c, result) => void replies.push({ device, id: c.id, result });

    for (const id of [1, 2, 3]) expect(dispatch.dispatch('a', command(id), replyFor('a'))).toBe(true);
    expect(dispatch.dispatch('a', { kind: 'attributes-push', attributes: { setpoint: 5, other: 1 } }, replyFor('a'))).toBe(true);
    // Device a is saturated; device b is not affected.
    expect(dispatch.dispatch('b', command(10), replyFor('b'))).toBe(true);
    expect(replies).toEqual([{ device: 'a', id: 3, result: { error: expect.objectContaining({ code: expect.anything() }) } }]);
    expect(dispatch.counters('a')).toEqual({ pushes: 0, commands: 2, invalid: 0, refused: 2 });
    expect(dispatch.counters('b')).toEqual({ pushes: 0, commands: 1, invalid: 0, refused: 0 });

    a.release();
    b.release();
    await settled();
    expect(replies.slice(1)).toEqual([
      { device: 'a', id: 1, result: { params: { method: 'm' } } },
      { device: 'a', id: 2, result: { params: { method: 'm' } } },
      { device: 'b', id: 10, result: { params: { method: 'm' } } },
    ]);
    // The push refused while busy is corrected for its known point only, once the episode ends.
    expect(a.corrected).toEqual([['setpoint']]);
    expect(a.applied).toEqual([]);
    expect(capture.count('inbound messages refused: too many pending')).toBe(1);
    expect(capture.count('inbound messages accepted again')).toBe(1);
  });

  it('drops a message for a device never added, with one log line, and answers nothing', () => {
    const capture = captureLogger();
    const dispatch = new InboundDispatch({ maxPendingPerDevice: 2, log: capture.logger });
    const replies: unknown[] = [];
    expect(dispatch.dispatch('ghost', command(1), (c) => void replies.push(c))).toBe(false);
    expect(replies).toEqual([]);
    expect(dispatch.counters('ghost')).toBeUndefined();
    expect(capture.lines().filter((l) => l.msg === 'inbound message for an unknown device dropped')).toEqual([
      expect.objectContaining({ device: 'ghost', kind: 'command' }),
    ]);
  });

  it('holds a replaced device\'s messages in order and runs them, after what the old parts left unfinished, on the new parts', async () => {
    const capture = captureLogger();
    const dispatch = new InboundDispatch({ maxPendingPerDevice: 3, log: capture.logger });
    const old = heldDevice(capture.logger);
    dispatch.addDevice('a', old.target);
    const replies: Array<{ id: number; result: unknown }> = [];
    const reply: CommandReplier = (c, result) => void replies.push({ id: c.id, result });
    dispatch.dispatch('a', command(1), reply); // running on the old parts, never finished there
    dispatch.hold('a');
    let idle = false;
    void dispatch.idle('a').then(() => { idle = true; });
    dispatch.dispatch('a', { kind: 'attributes-push', attributes: { setpoint: 7 } }, reply);
    dispatch.dispatch('a', command(2), reply);
    // Pending limit 3: running 1 + held 2; the next one is answered busy at once, nothing lost silently.
    dispatch.dispatch('a', command(3), reply);
    await settled();
    expect(replies).toEqual([{ id: 3, result: { error: expect.objectContaining({ code: 429 }) } }]);
    expect(old.applied).toEqual([]);
    expect(idle).toBe(false);

    const next = heldDevice(capture.logger);
    expect(dispatch.resume('a', next.target)).toBe(1);
    await Promise.resolve();
    expect(idle).toBe(true);
    // The old run finishing late answers nothing and reports nothing.
    old.release();
    await settled();
    expect(replies).toHaveLength(1);
    expect(next.applied).toEqual([{ setpoint: 7 }]);
    next.release();
    await settled();
    expect(replies.slice(1)).toEqual([{ id: 1, result: { params: { method: 'm' } } }, { id: 2, result: { params: { method: 'm' } } }]);
    expect(dispatch.counters('a')).toEqual({ pushes: 1, commands: 2, invalid: 0, refused: 1 });
    // Once resumed, messages run at once again.
    dispatch.dispatch('a', { kind: 'attributes-push', attributes: { setpoint: 8 } }, reply);
    await settled();
    expect(next.applied).toEqual([{ setpoint: 7 }, { setpoint: 8 }]);
    expect(next.corrected).toEqual([]);
  });

  it('idle() resolves at once when nothing runs, and when the last running message settles', async () => {
    const capture = captureLogger();
    const dispatch = new InboundDispatch({ maxPendingPerDevice: 3, log: capture.logger });
    const device = heldDevice(capture.logger);
    dispatch.addDevice('a', device.target);
    await dispatch.idle('a');
    await dispatch.idle('ghost');
    dispatch.dispatch('a', command(1), () => undefined);
    dispatch.hold('a');
    let idle = false;
    void dispatch.idle('a').then(() => { idle = true; });
    await settled();
    expect(idle).toBe(false);
    device.release();
    await settled();
    expect(idle).toBe(true);
  });
});
