// The line capture records only while watched, keeps a bounded ring, and rebuilds PDUs from the
// call and its answer (a Modbus exception as function | 0x80 and its code).
import { describe, expect, it } from 'vitest';
import { capturedTransport, LineCapture, LineCaptures, type LineFrame } from '../../../src/field/modbus/line-capture.js';
import { ModbusExceptionError } from '../../../src/field/modbus/errors.js';
import { broadcastFrame } from '../../../src/core/modbus/broadcast-frame.js';
import { asEpoch, asMono, systemTime } from '../../../src/core/time.js';
import { FakeTransport } from '../../helpers/fake-transport.js';

/** gateway.web.lineFramesKept, small here. */
const KEPT = 10;

describe('LineCapture', () => {
  it('records nothing while nobody watches', async () => {
    const capture = new LineCapture(KEPT, { now: () => asMono(1000), wallNow: () => asEpoch(1000) });
    expect(await capture.around(1, 3, [0, 0, 0, 1], async () => 7, () => [2, 0, 7])).toBe(7);
    const seen: LineFrame[] = [];
    const watch = capture.watch((f) => seen.push(f));
    expect(watch.recent).toEqual([]);
    watch.stop();
    expect(capture.watched).toBe(false);
  });

  it('records request and reply, and an exception reply, while watched; keeps the last frames only', async () => {
    let now = 1000;
    const capture = new LineCapture(KEPT, { now: () => asMono(now), wallNow: () => asEpoch(now) });
    const seen: LineFrame[] = [];
    const watch = capture.watch((f) => seen.push(f));
    await capture.around(1, 3, [0, 0, 0, 1], async () => { now += 12; return 7; }, () => [2, 0, 7]);
    await expect(capture.around(2, 3, [1, 44, 0, 1], async () => { now += 5; throw new ModbusExceptionError(2, 2); }, () => [])).rejects.toThrow(ModbusExceptionError);
    expect(seen).toEqual([
      { at: 1000, direction: 'request', unit: 1, fn: 3, hex: '03 00 00 00 01', verdict: 'sent' },
      { at: 1012, direction: 'reply', unit: 1, fn: 3, hex: '03 02 00 07', answerMs: 12, verdict: 'ok' },
      { at: 1012, direction: 'request', unit: 2, fn: 3, hex: '03 01 2c 00 01', verdict: 'sent' },
      { at: 1017, direction: 'reply', unit: 2, fn: 3, hex: '83 02', answerMs: 5, verdict: 'ModbusExceptionError' },
    ]);
    for (let i = 0; i < KEPT; i++) await capture.around(1, 4, [0, 0, 0, 1], async () => 1, () => [2, 0, 1]);
    watch.stop();
    const later = capture.watch(() => undefined);
    expect(later.recent).toHaveLength(KEPT);
    expect(later.recent.at(-1)?.direction).toBe('reply');
  });

  it('LineCaptures gives each bus a capture of its configured size; a reopened bus starts afresh', async () => {
    const captures = new LineCaptures(3);
    const first = captures.open('plant');
    first.watch(() => undefined);
    for (let i = 0; i < 5; i++) await first.around(1, 3, [0, 0, 0, 1], async () => 1, () => [2, 0, 1]);
    expect(first.watch(() => undefined).recent).toHaveLength(3);
    const second = captures.open('plant');
    expect(captures.get('plant')).toBe(second);
    expect(second.framesKept).toBe(3);
    expect(second.watch(() => undefined).recent).toEqual([]);
  });

  it('tells each watcher once when its bus is replaced or removed, and lets it go', () => {
    const captures = new LineCaptures(3);
    const first = captures.open('plant');
    const ended: string[] = [];
    const kept = first.watch(() => undefined, () => ended.push('replaced'));
    const stopped = first.watch(() => undefined, () => ended.push('stopped before'));
    stopped.stop();
    captures.open('plant');
    expect(ended).toEqual(['replaced']);
    expect(first.watched).toBe(false);
    kept.stop();
    captures.get('plant')?.watch(() => undefined, () => ended.push('removed'));
    expect(captures.delete('plant')).toBe(true);
    expect(captures.delete('plant')).toBe(false);
    expect(ended).toEqual(['replaced', 'removed']);
  });

  it('the captured transport keeps every optional part of the line\'s transport (late replies and their guard, silence, broadcast)', async () => {
    const inner = new FakeTransport(systemTime);
    inner.latencyMs = 0;
    const watched: unknown[] = [];
    Object.assign(inner, { keepsSilenceAfterReply: true, onLateReply: () => undefined, watchLateReplyFor: (...args: unknown[]) => watched.push(args) });
    const capture = new LineCapture(KEPT, { now: () => asMono(1000), wallNow: () => asEpoch(1000) });
    const wrapped = capturedTransport(inner, capture);
    await wrapped.open();
    expect(wrapped.keepsSilenceAfterReply).toBe(true);
    expect(wrapped.onLateReply).toBeTypeOf('function');
    wrapped.watchLateReplyFor?.(2, { functionCode: 3, quantity: 4 }, 30_000); // the guard's length reaches the line's port
    expect(watched).toEqual([[2, { functionCode: 3, quantity: 4 }, 30_000]]);
    expect(wrapped.broadcast).toBeTypeOf('function');
    const seen: LineFrame[] = [];
    capture.watch((f) => seen.push(f));
    const frame = broadcastFrame({ kind: 'write-registers', address: 5, values: [0x1234], forceMulti: false });
    await wrapped.broadcast!(frame, 0);
    expect(inner.broadcasts).toEqual([frame]);
    expect(seen[0]).toMatchObject({ direction: 'request', unit: 0, fn: 6, hex: '06 00 05 12 34', verdict: 'sent' });
    // A transport that cannot broadcast (Modbus TCP) still cannot behind the capture.
    const tcp = Object.assign(new FakeTransport(systemTime), { broadcast: undefined });
    expect(capturedTransport(tcp, capture).broadcast).toBeUndefined();
  });
});
