// A reload that replaces a device but not its cloud identity, against the emulator (the cloud) and
// the Modbus simulator (the device): the device keeps its MQTT link (the cloud sees no new
// connect); a push sent through interface A and a command sent through interface B while the
// device is replaced are held and written to the simulator by the replacement, with its new point
// map; a command still running on the old device after `cloud.drainMs` is fenced off and run
// again by the replacement, which alone answers.
import { afterEach, describe, expect, it } from 'vitest';
import type { CommandConfig } from '../../src/core/config/command-types.js';
import type { Config } from '../../src/core/config/config.js';
import type { DeviceConfig } from '../../src/core/config/site-types.js';
import { startGateway } from '../../src/main.js';
import type { GatewayHandle } from '../../src/ops/gateway-handle.js';
import { captureLog, type CapturedLog } from '../helpers/capture-log.js';
import { COMMANDS, deviceApi, meterDevice, startSite, waitFor, type Site } from './harness.js';

const TOKEN = 'demo-meter-1-token';
const DEVICE_ID = 'dev-meter-1';

// Each one writes, waits, then reads: while it waits it is "in flight" on the device, visibly
// (the register already holds the written value).
const SLOW: CommandConfig[] = [
  { method: 'slow_speed', requiredParams: ['rpm'], steps: [{ kind: 'write', point: 'speed', param: 'rpm' }, { kind: 'delay', ms: 1500 }, { kind: 'read', points: ['speed'] }] },
  { method: 'slow_setpoint', requiredParams: ['value'], steps: [{ kind: 'write', point: 'setpoint', param: 'value' }, { kind: 'delay', ms: 1500 }, { kind: 'read', points: ['setpoint'] }] },
];

function meter(edit: (d: DeviceConfig) => DeviceConfig = (d) => d): DeviceConfig {
  const base = meterDevice('meter-1', 1, TOKEN, 200);
  return edit({ ...base, commands: [...COMMANDS, ...SLOW] });
}

function withPoint(d: DeviceConfig, id: string, change: Record<string, unknown>): DeviceConfig {
  return { ...d, points: d.points.map((p) => (p.id === id ? { ...p, ...change } : p)) };
}

/** Interface A (A7): the cloud publishes the values to the device's `attributes/push`. */
async function pushThroughInterfaceA(site: Site, values: Record<string, unknown>): Promise<Record<string, unknown>> {
  const base = `http://127.0.0.1:${site.emulator.httpPort}/api/v1`;
  const tokenRes = await fetch(`${base}/access_token`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ app_id: 'demo-app', access_key: 'demo-access-key', secret_key: 'demo-secret-key' }),
  });
  const token = ((await tokenRes.json()) as { info: { access_token: string } }).info.access_token;
  const res = await fetch(`${base}/control/device/${DEVICE_ID}/attributes`, {
    method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(values),
  });
  return (await res.json()) as Record<string, unknown>;
}

let commandId = 100;

/** A command through interface B that waits for the device's reply (the emulator waits 5 s). */
function syncCommand(site: Site, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  commandId += 1;
  return deviceApi(site, TOKEN, 'POST', '/command/sync/send', { method, params, id: commandId });
}

describe('reload of a device that keeps its cloud identity', () => {
  let site: Site | undefined;
  let gateway: GatewayHandle | undefined;
  afterEach(async () => {
    await gateway?.stop();
    await site?.close();
    gateway = undefined;
    site = undefined;
  });

  async function start(drainMs: number): Promise<{ s: Site; g: GatewayHandle; capture: CapturedLog; connects: () => number; configOf: (d: DeviceConfig) => Config }> {
    const s = await startSite();
    site = s;
    let connects = 0;
    const markConnected = s.emulator.state.markConnected.bind(s.emulator.state);
    s.emulator.state.markConnected = (deviceId, via) => {
      if (deviceId === DEVICE_ID) connects += 1;
      return markConnected(deviceId, via);
    };
    const capture = captureLog();
    const configOf = (d: DeviceConfig) => s.config([d], { drainMs });
    const g = await startGateway(configOf(meter()), { logger: capture.log, env: {} });
    gateway = g;
    await waitFor(() => (g.status().links[0]?.state === 'up' && g.status().devices[0]?.online ? true : undefined), 30_000);
    return { s, g, capture, connects: () => connects, configOf };
  }

  it('keeps the link; a push and a command sent while it is replaced are written by the replacement', async () => {
    const { s, g, capture, connects, configOf } = await start(5000);
    const sim = s.sim.simulator;
    const connectsBefore = connects();
    expect(connectsBefore).toBeGreaterThan(0);
    // A command in flight on the old device holds the replacement open (up to drainMs).
    const slow = syncCommand(s, 'slow_speed', { rpm: 1111 });
    await waitFor(() => (sim.getRegister(1, 'holding', 1) === 1111 ? true : undefined));
    // The new definition lets speed go higher: only the replacement accepts 3500.
    const next = configOf(meter((d) => withPoint(d, 'speed', { max: 4000 })));
    const reloading = g.reload(() => ({ config: next, sha256: 'next', issues: [] }));
    await waitFor(() => (capture.messages('inbound messages held while the device is replaced').length > 0 ? true : undefined));

    const pushed = await pushThroughInterfaceA(s, { setpoint: 33.3 });
    expect(pushed.result).toBe(true);
    const command = syncCommand(s, 'set_speed', { rpm: 3500 });
    expect((await reloading).outcome).toBe('applied');

    expect(await slow).toMatchObject({ result: 1, command: { params: { speed: 1111 } } });
    expect(await command).toMatchObject({ result: 1, command: { params: { speed: 3500 } } });
    await waitFor(() => (sim.getRegister(1, 'holding', 0) === 333 ? true : undefined));
    expect(sim.getRegister(1, 'holding', 1)).toBe(3500);
    // The confirmed values reach the cloud through the same link.
    await waitFor(async () => {
      const stored = ((await deviceApi(s, TOKEN, 'GET', '/attributes')).attributes ?? {}) as Record<string, unknown>;
      return stored.setpoint === 33.3 && stored.speed === 3500 ? true : undefined;
    });
    expect(connects()).toBe(connectsBefore);
    expect(g.status().links).toEqual([expect.objectContaining({ device: 'meter-1', state: 'up', reconnects: 0 })]);
    expect(capture.messages('inbound messages unfinished on the replaced device run again')).toHaveLength(0);
    expect(capture.lines().filter((l) => l.msg === 'inbound message for an unknown device dropped')).toHaveLength(0);
  }, 90_000);

  it('a command still running on the old device after drainMs runs again with the new point map; only that run answers', async () => {
    const { s, g, capture, connects, configOf } = await start(300);
    const sim = s.sim.simulator;
    const connectsBefore = connects();
    const slow = syncCommand(s, 'slow_setpoint', { value: 12.5 });
    // Written with the old scale (0.1): 125.
    await waitFor(() => (sim.getRegister(1, 'holding', 0) === 125 ? true : undefined));
    const next = configOf(meter((d) => withPoint(d, 'setpoint', { scale: 0.01 })));
    expect((await g.reload(() => ({ config: next, sha256: 'next', issues: [] }))).outcome).toBe('applied');
    // The old run's read step is fenced off (its error is never sent); the replacement's run answers.
    expect(await slow).toMatchObject({ result: 1, command: { params: { setpoint: 12.5 } } });
    expect(sim.getRegister(1, 'holding', 0)).toBe(1250);
    expect(capture.messages('inbound messages unfinished on the replaced device run again')).toEqual([expect.objectContaining({ again: 1, device: 'meter-1' })]);
    expect(connects()).toBe(connectsBefore);
  }, 90_000);
});
