// A reload that replaces a device but not its cloud identity, against the emulator (the cloud) and
// the Modbus simulator (the device), for a device with a link of its own and for a sub-device on
// fieldgate's identity: the device keeps its MQTT link, or its place on the identity's (the
// cloud sees no new connect); a push sent through interface A and a command sent through
// interface B while the device is replaced are held and written to the simulator by the
// replacement, with its new point map; a command still running on the old device after
// `cloud.drainMs` is fenced off and run again by the replacement, which alone answers.
import { describe, expect, it } from 'vitest';
import type { CommandConfig } from '../../src/core/config/command-types.js';
import type { Config } from '../../src/core/config/config.js';
import type { DeviceConfig } from '../../src/core/config/site-types.js';
import { startGateway } from '../../src/main.js';
import type { GatewayHandle } from '../../src/ops/gateway-handle.js';
import { captureLog, type CapturedLog } from '../helpers/capture-log.js';
import { COMMANDS, deviceApi, meterDevice, startSite, waitFor, type Site } from './harness.js';
import { countConnects, perTestSite } from './per-test-site.js';

/** The device under test: meter-1 on its own link, or meter-4 (unit 2) as sub-device "4" of the identity. */
interface Subject {
  kind: string;
  name: string;
  unit: number;
  token: string;
  deviceId: string;
  /** Whose connects show a new link: the device's own, or the identity's. */
  linkId: string;
  address?: string;
}

const SUBJECTS: Subject[] = [
  { kind: 'own link', name: 'meter-1', unit: 1, token: 'demo-meter-1-token', deviceId: 'dev-meter-1', linkId: 'dev-meter-1' },
  { kind: 'gateway mode', name: 'meter-4', unit: 2, token: 'demo-meter-4-token', deviceId: 'dev-meter-4', linkId: 'dev-fieldgate', address: '4' },
];
const IDENTITY = { accessToken: 'demo-gateway-token', allowCreate: false };

// Each one writes, waits, then reads: while it waits it is "in flight" on the device, visibly
// (the register already holds the written value).
const SLOW: CommandConfig[] = [
  { method: 'slow_speed', requiredParams: ['rpm'], steps: [{ kind: 'write', point: 'speed', param: 'rpm' }, { kind: 'delay', ms: 1500 }, { kind: 'read', points: ['speed'] }] },
  { method: 'slow_setpoint', requiredParams: ['value'], steps: [{ kind: 'write', point: 'setpoint', param: 'value' }, { kind: 'delay', ms: 1500 }, { kind: 'read', points: ['setpoint'] }] },
];

function meter(subject: Subject, edit: (d: DeviceConfig) => DeviceConfig = (d) => d): DeviceConfig {
  const base = meterDevice(subject.name, subject.unit, subject.token, 200);
  const cloud = subject.address === undefined ? base.cloud : { ...base.cloud!, mode: 'gateway' as const, subDeviceAddress: subject.address };
  return edit({ ...base, cloud, commands: [...COMMANDS, ...SLOW] });
}

function withPoint(d: DeviceConfig, id: string, change: Record<string, unknown>): DeviceConfig {
  return { ...d, points: d.points.map((p) => (p.id === id ? { ...p, ...change } : p)) };
}

/** Interface A (A7): the cloud publishes the values to the device's `attributes/push`. */
async function pushThroughInterfaceA(site: Site, deviceId: string, values: Record<string, unknown>): Promise<Record<string, unknown>> {
  const base = `http://127.0.0.1:${site.emulator.httpPort}/api/v1`;
  const tokenRes = await fetch(`${base}/access_token`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ app_id: 'demo-app', access_key: 'demo-access-key', secret_key: 'demo-secret-key' }),
  });
  const token = ((await tokenRes.json()) as { info: { access_token: string } }).info.access_token;
  const res = await fetch(`${base}/control/device/${deviceId}/attributes`, {
    method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(values),
  });
  return (await res.json()) as Record<string, unknown>;
}

let commandId = 100;

/** A command through interface B that waits for the device's reply (the emulator waits 5 s). */
function syncCommand(site: Site, token: string, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  commandId += 1;
  return deviceApi(site, token, 'POST', '/command/sync/send', { method, params, id: commandId });
}

describe.each(SUBJECTS)('reload of a device that keeps its cloud identity ($kind)', (subject) => {
  const held = perTestSite();

  async function start(drainMs: number): Promise<{ s: Site; g: GatewayHandle; capture: CapturedLog; connects: () => number; configOf: (d: DeviceConfig) => Config }> {
    const s = await startSite();
    held.site = s;
    const connects = countConnects(s, subject.linkId);
    const capture = captureLog();
    const configOf = (d: DeviceConfig) => s.config([d], { drainMs, ...(subject.address === undefined ? {} : { identity: IDENTITY, mode: 'direct' as const }) });
    const g = await startGateway(configOf(meter(subject)), { logger: capture.log, env: {} });
    held.gateway = g;
    await waitFor(() => (g.status().links.every((l) => l.state === 'up') && g.status().devices[0]?.online && s.emulator.state.isOnline(subject.deviceId) ? true : undefined), 30_000);
    return { s, g, capture, connects, configOf };
  }

  it('keeps the link; a push and a command sent while it is replaced are written by the replacement', async () => {
    const { s, g, capture, connects, configOf } = await start(5000);
    const sim = s.sim.simulator;
    const unit = subject.unit;
    const connectsBefore = connects();
    expect(connectsBefore).toBeGreaterThan(0);
    const linksBefore = g.status().links;
    // A command in flight on the old device holds the replacement open (up to drainMs).
    const slow = syncCommand(s, subject.token, 'slow_speed', { rpm: 1111 });
    await waitFor(() => (sim.getRegister(unit, 'holding', 1) === 1111 ? true : undefined));
    // The new definition lets speed go higher: only the replacement accepts 3500.
    const next = configOf(meter(subject, (d) => withPoint(d, 'speed', { max: 4000 })));
    const reloading = g.reload(() => ({ config: next, sha256: 'next', issues: [] }));
    await waitFor(() => (capture.messages('inbound messages held while the device is replaced').length > 0 ? true : undefined));

    const pushed = await pushThroughInterfaceA(s, subject.deviceId, { setpoint: 33.3 });
    expect(pushed.result).toBe(true);
    const command = syncCommand(s, subject.token, 'set_speed', { rpm: 3500 });
    expect((await reloading).outcome).toBe('applied');

    expect(await slow).toMatchObject({ result: 1, command: { params: { speed: 1111 } } });
    expect(await command).toMatchObject({ result: 1, command: { params: { speed: 3500 } } });
    await waitFor(() => (sim.getRegister(unit, 'holding', 0) === 333 ? true : undefined));
    expect(sim.getRegister(unit, 'holding', 1)).toBe(3500);
    // The confirmed values reach the cloud through the same link.
    await waitFor(async () => {
      const stored = ((await deviceApi(s, subject.token, 'GET', '/attributes')).attributes ?? {}) as Record<string, unknown>;
      return stored.setpoint === 33.3 && stored.speed === 3500 ? true : undefined;
    });
    expect(connects()).toBe(connectsBefore);
    expect(g.status().links.map((l) => ({ ...l, publishes: 0 }))).toEqual(linksBefore.map((l) => ({ ...l, publishes: 0 })));
    expect(s.emulator.state.isOnline(subject.deviceId)).toBe(true);
    expect(capture.messages('inbound messages unfinished on the replaced device run again')).toHaveLength(0);
    expect(capture.lines().filter((l) => l.msg === 'inbound message for an unknown device dropped' || l.msg === 'message for an unknown sub-device address refused')).toHaveLength(0);
  }, 90_000);

  it('a command still running on the old device after drainMs runs again with the new point map; only that run answers', async () => {
    const { s, g, capture, connects, configOf } = await start(300);
    const sim = s.sim.simulator;
    const connectsBefore = connects();
    const slow = syncCommand(s, subject.token, 'slow_setpoint', { value: 12.5 });
    // Written with the old scale (0.1): 125.
    await waitFor(() => (sim.getRegister(subject.unit, 'holding', 0) === 125 ? true : undefined));
    const next = configOf(meter(subject, (d) => withPoint(d, 'setpoint', { scale: 0.01 })));
    expect((await g.reload(() => ({ config: next, sha256: 'next', issues: [] }))).outcome).toBe('applied');
    // The old run's read step is fenced off (its error is never sent); the replacement's run answers.
    expect(await slow).toMatchObject({ result: 1, command: { params: { setpoint: 12.5 } } });
    expect(sim.getRegister(subject.unit, 'holding', 0)).toBe(1250);
    expect(capture.messages('inbound messages unfinished on the replaced device run again')).toEqual([expect.objectContaining({ again: 1, device: subject.name })]);
    expect(connects()).toBe(connectsBefore);
  }, 90_000);
});
