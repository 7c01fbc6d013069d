// The embedded demo end to end: one frame with both devices' values, equal on gateway and cloud.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runDemoSession } from '../../../src/demo/demo.js';
import { renderFrame } from '../../../src/demo/view.js';

describe('fieldgate demo', () => {
  it('shows both simulated devices with the cloud view matching the gateway view', async () => {
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (c: Buffer) => (out += c.toString()));
    const code = await runDemoSession({ io: { stdout, stderr: new PassThrough(), env: {} }, once: true, durationS: undefined, signal: new AbortController().signal });
    expect(code).toBe(0);
    expect(out).toMatch(/meter-1 on rs485: online, link up/);
    expect(out).toMatch(/plc on plc-net: online, link up/);
    // meter-4 has no link of its own: it reaches the cloud through fieldgate's identity.
    expect(out).toMatch(/meter-4 on rs485: online, via gateway identity, link up/);
    expect(out).toMatch(/voltage\s+230\.40\s+230\.40/);
    // voltage is fixed in the simulator map, so gateway and cloud columns both show it.
    expect(out).toMatch(/voltage\s+230\.10\s+230\.10/);
    expect(out).toMatch(/speed\s+1450\s+1450/);
  }, 90_000);
});

describe('renderFrame', () => {
  it('lays out values side by side and the round trips', () => {
    const text = renderFrame({
      status: {
        version: '0.1.0', startedAt: '', uptimeS: 1, buses: [], outbox: { depth: 3, bytes: 10, maxBytes: 100, dropped: 0 }, rateQueue: null,
        devices: [{ name: 'm', bus: 'b', online: false, points: 2, lastPollAgeMs: null, skippedCycles: 0 }],
        links: [{ device: 'm', state: 'down', reconnects: 0, publishes: 4 }],
      },
      gateway: { m: { a: 1.5, b: true } }, cloud: { m: undefined },
      roundTrips: [{ label: 'push x=1', at: '12:00:00', ok: false, detail: 'register holds 0', latencyMs: 2000 }],
      endpoints: ['cloud: here'],
    });
    expect(text).toContain('m on b: OFFLINE, link down, 4 reports acked, outbox 3');
    expect(text).toMatch(/a\s+1\.50\s+\(reading\)/);
    expect(text).toContain('12:00:00 push x=1: FAILED in 2000 ms, register holds 0');
  });
});
