// The demo's log lines as readable events: explained messages, the generic form, and whatever a
// log line may hold (not JSON, huge, deep, control characters) never reaching the view raw.
import { describe, expect, it } from 'vitest';
import { DemoEventLog } from '../../../src/demo/event-log.js';
import { eventFromLogLine, formatEvent } from '../../../src/demo/events.js';

const line = (fields: Record<string, unknown>) => JSON.stringify({ level: 40, time: '2026-11-26T08:40:54.805Z', service: 'fieldgate', pid: 7, hostname: 'box', ...fields });

describe('eventFromLogLine', () => {
  it.each<[string, string, string]>([
    ['the seed\'s refused setpoint, explained',
      line({ component: 'commands', device: 'meter-1', source: 'sync:start', refused: 1, failed: 0, keys: 'setpoint', reasons: ['value 400 is above the maximum 60'], corrected: 1, correctedKeys: 'setpoint', msg: 'cloud write refused' }),
      '08:40:54 warn: meter-1: cloud value for setpoint refused (a value the cloud holds, read at start or reconnect): value 400 is above the maximum 60; nothing was written, the device\'s own value was reported back to the cloud instead'],
    ['a refused push without a correction',
      line({ device: 'plc', source: 'push', keys: 'speed', reasons: ['value 9000 is above the maximum 3000'], corrected: 0, msg: 'cloud write refused' }),
      '08:40:54 warn: plc: cloud value for speed refused (pushed from the cloud): value 9000 is above the maximum 3000; nothing was written'],
    ['a taken health port, one plain line',
      line({ level: 50, err: { type: 'Error', message: 'listen EADDRINUSE: address already in use 127.0.0.1:9180', stack: 'Error: listen EADDRINUSE\n    at Server.setupListenHandle', code: 'EADDRINUSE' }, port: 9180, msg: 'health endpoint could not start; continuing without it' }),
      '08:40:54 error: health endpoint not started: port 9180 is in use (another demo, or the installed service?); running without it (--health-port N picks another, 0 any free one)'],
    ['a generic message with its fields, an error by its message only',
      line({ level: 50, component: 'cloud', device: 'plc', err: { type: 'Error', message: 'connack timeout', stack: 'Error: connack timeout\n    at x (y.js:1:1)' }, attempts: 3, msg: 'cloud link down' }),
      '08:40:54 error: cloud: cloud link down (device plc, err connack timeout, attempts 3)'],
    ['info without a level word', line({ level: 30, msg: 'gateway started', devices: 3 }), '08:40:54 gateway started (devices 3)'],
    ['a text line that is not JSON', 'socat[12]: E something', 'socat[12]: E something'],
    ['JSON that is not an object', '[1,2,3]', '[1,2,3]'],
    ['a JSON line cut short', '{"level":40,"msg":"cloud wr', 'a log line that is not valid JSON (27 characters)'],
    ['no message, unknown level, bad time', JSON.stringify({ level: 99, time: 'yesterday', a: null }), '(no message) (a null)'],
    ['nested values stay short', line({ msg: 'm', deep: { a: { b: { c: 1 } } }, list: [1, 2, 3, 4, 5, 6, 7] }), '08:40:54 warn: m (deep a {...}, list 1, 2, 3, 4, 5, ... (7))'],
    ['control characters and newlines removed', line({ msg: 'm', text: 'a\nb\u001b[2Jc' }), '08:40:54 warn: m (text a b[2Jc)'],
  ])('%s', (_name, text, expected) => {
    const event = eventFromLogLine(text);
    expect(event && formatEvent(event)).toBe(expected);
    expect(expected).not.toMatch(/\n|"level"|\bat \S+:\d+/);
  });

  it('ignores blank lines and cuts huge ones', () => {
    expect(eventFromLogLine('   ')).toBeUndefined();
    const huge = eventFromLogLine(line({ msg: 'm', blob: 'x'.repeat(100_000) }));
    expect(huge?.text.length).toBeLessThanOrEqual(303);
    expect(huge?.text.endsWith('...')).toBe(true);
  });

  it('does not take a message named like an object property for an explained one', () => {
    expect(eventFromLogLine(line({ msg: 'constructor' }))?.text).toBe('constructor');
    expect(eventFromLogLine(line({ msg: '__proto__' }))?.text).toBe('__proto__');
  });
});

describe('DemoEventLog', () => {
  it('keeps the latest events from lines split anywhere, and counts them all', () => {
    const log = new DemoEventLog({ keep: 2, maxLineChars: 1000 });
    const text = [1, 2, 3].map((n) => line({ msg: `event ${n}` })).join('\n') + '\n';
    for (let i = 0; i < text.length; i += 7) log.write(text.slice(i, i + 7));
    expect(log.latest()).toEqual(['08:40:54 warn: event 2', '08:40:54 warn: event 3']);
    expect(log.total).toBe(3);
  });

  it('takes a line without an end once it is longer than the limit', () => {
    const log = new DemoEventLog({ keep: 5, maxLineChars: 50 });
    log.write('y'.repeat(80));
    expect(log.total).toBe(1);
    expect(log.latest()[0]).toBe('y'.repeat(50));
    log.write(`${line({ msg: 'big', blob: 'z'.repeat(100) })}\n`);
    expect(log.latest()[1]).toMatch(/^a log line that is not valid JSON \(50 characters\)$/);
  });
});
