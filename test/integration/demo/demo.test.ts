// The embedded demo end to end: one frame with both devices' values, equal on gateway and cloud.
import { createServer, type Server } from 'node:net';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runDemoSession } from '../../../src/demo/demo.js';
import { renderFrame } from '../../../src/demo/view.js';
import { freePort } from '../../helpers/mosquitto.js';
import { capturedIo, runCli } from '../../helpers/run-cli.js';
import { waitFor } from '../../helpers/wait.js';

/** Output of a demo session: nothing on either stream may be a raw JSON log line. */
const RAW_LOG = /"level":|"msg":/;

async function occupied(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port };
}

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
    // The demo's own dashboard on the app side saw the devices come online and report.
    expect(out).toMatch(/app-side subscription \(ws:\/\/127\.0\.0\.1:\d+\/mqtt\):/);
    expect(out).toMatch(/ {2}attributes +[1-9]\d*  latest .+: report /);
    // Subscribed before the gateway started: the online message of each of the four (meter-1, the
    // PLC, fieldgate's own identity and meter-4 behind it) was seen, not only the later ones.
    const online = /^ {2}online +(\d+)  latest .+: online$/m.exec(out);
    expect(Number(online?.[1])).toBeGreaterThanOrEqual(4);
  }, 90_000);
});

describe('fieldgate demo health port and events', () => {
  it('listens on FIELDGATE_HEALTH_PORT', async () => {
    const port = await freePort();
    const r = await runCli(['demo', '--once'], { FIELDGATE_HEALTH_PORT: String(port) });
    expect(r.code).toBe(0);
    expect(r.out).toContain(`health: http://127.0.0.1:${port}/status  (try: fieldgate status --port ${port})`);
    expect(`${r.out}${r.err}`).not.toMatch(RAW_LOG);
  }, 120_000);

  it('says in one plain line that a --health-port is taken (it wins over the environment), and runs without it', async () => {
    const { server, port } = await occupied();
    try {
      const r = await runCli(['demo', '--once', '--health-port', String(port)], { FIELDGATE_HEALTH_PORT: '1' });
      expect(r.code).toBe(0);
      const health = r.out.split('\n').filter((l) => l.includes('health'));
      expect(health).toEqual([`health: off: port ${port} is in use (another demo, or the installed fieldgate service?); --health-port N picks another, 0 any free one`]);
      expect(r.out).toMatch(/plc on plc-net: online, link up/);
      expect(`${r.out}${r.err}`).not.toMatch(RAW_LOG);
      expect(`${r.out}${r.err}`).not.toMatch(/EADDRINUSE|\bat \S+:\d+:\d+/);
    } finally {
      server.close();
    }
  }, 120_000);

  it('refuses a port that is not one', async () => {
    expect(await runCli(['demo', '--health-port', '70000'])).toMatchObject({ code: 64, err: expect.stringContaining('--health-port: "70000" is not a port number 0..65535') });
    expect(await runCli(['demo', '--health-port', '-1'])).toMatchObject({ code: 64 });
    expect(await runCli(['demo'], { FIELDGATE_HEALTH_PORT: 'ninety' })).toMatchObject({ code: 78, err: 'fieldgate demo: FIELDGATE_HEALTH_PORT: "ninety" is not a port number 0..65535\n' });
  });

  it('shows its own events as readable lines: the seed\'s refused setpoint explained, never raw JSON', async () => {
    const { io, out, err } = capturedIo();
    const stop = new AbortController();
    const session = runDemoSession({ io, once: false, durationS: undefined, signal: stop.signal, healthPort: 0 });
    try {
      await waitFor(() => out().includes('gateway events') && out().includes('meter-1: cloud value for setpoint refused (a value the cloud holds, read at start or reconnect): value 400 is above the maximum 60; nothing was written, the device\'s own value was reported back to the cloud instead'), { what: 'the explained seed correction in the view', timeoutMs: 90_000, intervalMs: 200 });
    } finally {
      stop.abort();
    }
    expect(await session).toBe(0);
    expect(out()).not.toMatch(RAW_LOG);
    expect(err()).toBe('');
  }, 120_000);
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

  it('lists the latest gateway events, saying how many it leaves out', () => {
    const frame = {
      status: { version: '0.1.0', startedAt: '', uptimeS: 1, buses: [], outbox: null, rateQueue: null, devices: [], links: [] },
      gateway: {}, cloud: {}, roundTrips: [], endpoints: [],
    };
    expect(renderFrame({ ...frame, events: { latest: ['a', 'b'], total: 2 } })).toContain('gateway events:\n  a\n  b\n');
    expect(renderFrame({ ...frame, events: { latest: ['c'], total: 9 } })).toContain('gateway events (latest 1 of 9):\n  c\n');
    expect(renderFrame({ ...frame, events: { latest: [], total: 0 } })).not.toContain('events');
  });

  it('shows a line per app-side message kind, with the latest of each', () => {
    const frame = {
      status: { version: '0.1.0', startedAt: '', uptimeS: 1, buses: [], outbox: null, rateQueue: null, devices: [], links: [] },
      gateway: {}, cloud: {}, roundTrips: [], endpoints: [],
    };
    const text = renderFrame({ ...frame, appSide: { endpoint: 'ws://h:1/mqtt', counts: { attributes: 3, event: 0 }, latest: { attributes: 'Meter 1: report voltage' }, error: undefined } });
    expect(text).toContain('app-side subscription (ws://h:1/mqtt):\n  attributes        3  latest Meter 1: report voltage\n  event             0\n');
    expect(renderFrame({ ...frame, appSide: { endpoint: 'ws://h:1/mqtt', counts: {}, latest: {}, error: 'connack 5' } })).toContain('app-side subscription (ws://h:1/mqtt): connack 5:');
  });
});
