// Writes keep their order while reloads replace a device's MQTT link, against the emulator (the
// cloud) and the Modbus simulator (the device): the credential swaps between an access token and a
// device key, so every reload gives the device a new session and a new connection, while pushes
// with increasing setpoints arrive through interface A (published, not stored: the cloud's stored
// value is what the device last reported, which the interface-B sync on connect reads). Every write the
// simulator takes is recorded, and every push the broker wrote to one of the device's connections:
// none of those may go unwritten, and no older setpoint may land after a newer one.
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { Config } from '../../src/core/config/config.js';
import type { DeviceConfig } from '../../src/core/config/site-types.js';
import { startGateway } from '../../src/main.js';
import type { GatewayHandle } from '../../src/ops/gateway-handle.js';
import { captureLog } from '../helpers/capture-log.js';
import { meterDevice, PROJECT_KEY, startSite, waitFor, type Site } from './harness.js';
import { perTestSite } from './per-test-site.js';

const TOKEN = 'demo-meter-1-token';
const DEVICE_ID = 'dev-meter-1';
const UNIT = 1;
const SETPOINT_ADDRESS = 0;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** meter-1 by its access token, or by its device key (interface B's certificate): another cloud identity, the same device. */
function meter(byKey: boolean): DeviceConfig {
  const base = meterDevice('meter-1', UNIT, TOKEN, 1000);
  return { ...base, cloud: byKey ? { deviceKey: 'meter-1', projectKey: PROJECT_KEY, allowCreate: false } : base.cloud };
}

/** Every value the simulator was asked to write to the setpoint register, in the order it took them. */
function recordSetpointWrites(site: Site): number[] {
  const writes: number[] = [];
  const sim = site.sim.simulator;
  const handle = sim.handle.bind(sim);
  sim.handle = (unit, pdu) => {
    if (unit === UNIT && pdu[0] === 0x06 && pdu.readUInt16BE(1) === SETPOINT_ADDRESS) writes.push(pdu.readUInt16BE(3));
    if (unit === UNIT && pdu[0] === 0x10 && pdu.readUInt16BE(1) === SETPOINT_ADDRESS) writes.push(pdu.readUInt16BE(6));
    return handle(unit, pdu);
  };
  return writes;
}

/** Indexes where a write landed below the one before it. */
function outOfOrder(writes: readonly number[]): number[] {
  return writes.flatMap((w, i) => (i > 0 && w < writes[i - 1]! ? [i] : []));
}

/**
 * Interface A's push as its handler makes it (the emulator publishes the values to the device's
 * `attributes/push`, stores nothing), called in-process so pushes leave in the order asked, each a
 * setpoint one step above the last.
 */
function increasingPushes(site: Site) {
  let next = 300;
  const pushed: number[] = [];
  return {
    pushed,
    /** Publishes the next push now; resolves once the broker took it. */
    async push(): Promise<number> {
      const raw = next;
      next += 1;
      pushed.push(raw);
      await site.emulator.link.pushAttributes(DEVICE_ID, { setpoint: raw / 10 });
      return raw;
    },
    /** The next value as a `write` command instead (interface A's command send). */
    async command(): Promise<number> {
      const raw = next;
      next += 1;
      pushed.push(raw);
      await site.emulator.link.sendCommand(DEVICE_ID, { method: 'write', params: { setpoint: raw / 10 }, id: raw });
      return raw;
    },
  };
}

/**
 * Interface B behind a proxy that answers each read of a device's attributes `delayMs` late: the
 * cloud's HTTP side slower than its MQTT side, as it often is.
 */
async function slowAttributeReads(site: Site, delayMs: number): Promise<{ url: string; server: Server }> {
  const target = `http://127.0.0.1:${site.emulator.httpPort}`;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const headers = Object.fromEntries(Object.entries(req.headers).filter((e): e is [string, string] => typeof e[1] === 'string' && e[0] !== 'host' && e[0] !== 'content-length'));
        const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
        const answer = await fetch(`${target}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers, ...(body ? { body } : {}) });
        const text = Buffer.from(await answer.arrayBuffer());
        if (req.method === 'GET' && /\/attributes(\?|$)/.test(req.url ?? '')) await sleep(delayMs);
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
        res.end(text);
      })().catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, server };
}

/** Setpoints (raw words) of the pushes and `write` commands the broker wrote to the device's connections. */
function recordForwarded(into: number[]): (deviceId: string, topic: string, payload: Buffer) => void {
  return (deviceId, topic, payload) => {
    if (deviceId !== DEVICE_ID) return;
    const body = JSON.parse(payload.toString()) as { setpoint?: number; params?: { setpoint?: number } };
    const value = topic === 'attributes/push' ? body.setpoint : topic.startsWith('command/send/') ? body.params?.setpoint : undefined;
    if (value !== undefined) into.push(Math.round(value * 10));
  };
}

/** What a run saw, checked: every forwarded value written or counted as dropped for a later one; no older value after a newer; the device ends on the last. */
function checkWrites(g: GatewayHandle, s: Site, forwarded: readonly number[], writes: readonly number[], sent: number, last: number): void {
  const written = new Set(writes);
  const unwritten = [...new Set(forwarded)].filter((raw) => !written.has(raw));
  const reversed = outOfOrder(writes);
  // A value the gateway dropped for a later write of the setpoint (held messages run together, a
  // push queued behind the next one) is delivered, and counted; any other unwritten one is lost.
  const order = g.status().devices[0]?.writes ?? { written: 0, superseded: 0, coalesced: 0, yielded: 0 };
  const lost = Math.max(0, unwritten.length - order.superseded - order.coalesced);
  // What the run saw, on one line: values sent, those that reached a connection, writes, drops, and the two faults.
  console.log(JSON.stringify({ sent, forwarded: forwarded.length, writes: writes.length, unwritten: unwritten.length, ...order, lost, outOfOrder: reversed.length }));
  expect(lost).toBe(0);
  // Whatever was dropped, the device went on to a later value.
  for (const raw of unwritten) expect(writes.some((w) => w > raw)).toBe(true);
  expect(reversed.map((i) => writes.slice(i - 1, i + 1))).toEqual([]);
  expect(s.sim.simulator.getRegister(UNIT, 'holding', SETPOINT_ADDRESS)).toBe(last);
}

describe('writes across link replacement', () => {
  const held = perTestSite();
  let proxy: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => (proxy ? proxy.close(resolve) : resolve(undefined)));
    proxy = undefined;
  });

  it('100 reloads swapping the credential kind under pushes: no push that reached the device lost, none written out of order', async () => {
    // Raw setpoint words (scale 0.1) of the pushes the broker wrote to a connection of the device.
    const forwarded: number[] = [];
    const s = await startSite({
      onForward: recordForwarded(forwarded),
    });
    held.site = s;
    const writes = recordSetpointWrites(s);
    const capture = captureLog();
    const slow = await slowAttributeReads(s, 40);
    proxy = slow.server;
    const configOf = (byKey: boolean): Config => s.config([meter(byKey)], { drainMs: 2000, apiBaseUrl: slow.url });
    const g = await startGateway(configOf(false), { logger: capture.log, env: {} });
    held.gateway = g;
    const linkUp = () => (g.status().links.every((l) => l.state === 'up') && s.emulator.state.isOnline(DEVICE_ID) ? true : undefined);
    await waitFor(linkUp, 30_000);

    const pushes = increasingPushes(s);
    // The adversary: a push published while interface B reads the device's values (the sync of
    // a new link), so the read's older value and the newer push race to the device.
    let pushing = true;
    const state = s.emulator.state;
    const attributeValues = state.attributeValues.bind(state);
    state.attributeValues = (device, keys) => {
      if (device.id === DEVICE_ID && pushing) void pushes.push();
      return attributeValues(device, keys);
    };
    const pusher = (async () => {
      while (pushing) {
        await pushes.push();
        await sleep(200);
      }
    })();

    for (let i = 1; i <= 100; i += 1) {
      const started = Date.now();
      // And one on its way to the connection the reload is about to close.
      void pushes.push();
      const result = await g.reload(() => ({ config: configOf(i % 2 === 1), sha256: `r${i}`, issues: [] }));
      expect(result.outcome).toBe('applied');
      await sleep(Math.max(0, 300 - (Date.now() - started)));
    }
    pushing = false;
    await pusher;
    // One last push once the last link is up: the device must end on it.
    await waitFor(linkUp, 30_000);
    const last = await pushes.push();
    await waitFor(() => (writes.at(-1) === last ? true : undefined), 30_000);

    checkWrites(g, s, forwarded, writes, pushes.pushed.length, last);
  }, 300_000);

  it('hostile: a reload storm while a slow device holds pushes and write commands in the queue', async () => {
    const forwarded: number[] = [];
    const s = await startSite({ onForward: recordForwarded(forwarded) });
    held.site = s;
    const writes = recordSetpointWrites(s);
    // Every reply 40 ms late: writes wait behind each other and behind the read-backs (within
    // cloud.inbound.maxPending: beyond it pushes are refused busy by design).
    s.sim.simulator.setFault(UNIT, { slowMs: 40 });
    const slow = await slowAttributeReads(s, 40);
    proxy = slow.server;
    const configOf = (byKey: boolean): Config => s.config([meter(byKey)], { drainMs: 2000, apiBaseUrl: slow.url });
    const g = await startGateway(configOf(false), { logger: captureLog().log, env: {} });
    held.gateway = g;
    const linkUp = () => (g.status().links.every((l) => l.state === 'up') && s.emulator.state.isOnline(DEVICE_ID) ? true : undefined);
    await waitFor(linkUp, 30_000);

    const values = increasingPushes(s);
    let sending = true;
    const state = s.emulator.state;
    const attributeValues = state.attributeValues.bind(state);
    state.attributeValues = (device, keys) => {
      if (device.id === DEVICE_ID && sending) void values.push();
      return attributeValues(device, keys);
    };
    const sender = (async () => {
      for (let n = 0; sending; n += 1) {
        await (n % 3 === 2 ? values.command() : values.push());
        await sleep(100);
      }
    })();
    // Back to back: the next reload starts as soon as the link the one before gave the device is up
    // (every other one at once, before that link has come up).
    for (let i = 1; i <= 40; i += 1) {
      void values.push();
      const result = await g.reload(() => ({ config: configOf(i % 2 === 1), sha256: `storm${i}`, issues: [] }));
      expect(result.outcome).toBe('applied');
      if (i % 2 === 0) await waitFor(linkUp, 30_000);
    }
    sending = false;
    await sender;
    await waitFor(linkUp, 30_000);
    const last = await values.push();
    await waitFor(() => (writes.at(-1) === last ? true : undefined), 30_000);
    checkWrites(g, s, forwarded, writes, values.pushed.length, last);
  }, 300_000);
});
