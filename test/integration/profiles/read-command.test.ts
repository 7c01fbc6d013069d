// The cloud's `read` command end to end against a SunSpec inverter served by the simulator: a
// command over MQTT (mosquitto) to the daemon, the daemon reading the profile's points over Modbus
// TCP. The reply carries only the asked points; each asked point without a value (not implemented,
// its scale factor not implemented or out of range) is named under "@absent" with why; hostile
// reads (thousands of entries, unknown ids) get bounded answers.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/ops/site-file.js';
import { loadProfiles } from '../../../src/ops/profile-library.js';
import { startGateway } from '../../../src/main.js';
import { createNotifier } from '../../../src/ops/systemd.js';
import type { GatewayHandle } from '../../../src/ops/gateway-handle.js';
import { silentLogger } from '../../../src/ops/log.js';
import { ABSENT_KEY } from '../../../src/core/device-write-types.js';
import { placeProfiles, profileUnit, siteDeviceBlock, startSimulation, type ProfileUnit, type Simulation } from '../../../packages/simulator/src/index.js';
import { freePort, Mosquitto } from '../../helpers/mosquitto.js';
import { waitFor } from '../../helpers/wait.js';

const UNIT = 1;
let unit: ProfileUnit;
let sim: Simulation;
let broker: Mosquitto;
let gateway: GatewayHandle;
let client: mqtt.MqttClient;
let dir: string;
const replies = new Map<string, Record<string, unknown>>();
let nextId = 100;

/** Where the simulator holds a point of the served profile. */
function addressOf(id: string): number {
  const held = unit.held.find((h) => h.point.id === id);
  if (!held) throw new Error(`no point ${id} in ${unit.spec.name}`);
  return held.point.address;
}

async function command(method: string, params: unknown): Promise<Record<string, unknown>> {
  const id = String(nextId++);
  await client.publishAsync(`command/send/${id}`, JSON.stringify({ method, params, id: Number(id) }), { qos: 1 });
  return waitFor(() => replies.get(id), { what: `reply to command ${id}`, timeoutMs: 30_000 });
}

beforeAll(async () => {
  const placed = placeProfiles(['sunspec-inverter-1ph'], loadProfiles([]).library);
  if (placed.problems.length > 0) throw new Error(placed.problems.join('; '));
  unit = profileUnit(UNIT, placed.placements);
  sim = await startSimulation({ map: { units: [unit.spec] }, logger: silentLogger(), tcp: { host: '127.0.0.1', port: 0 } });
  // What a real inverter does: VAr's factor not implemented, PF's a foreign value, St not implemented.
  sim.simulator.setRegister(UNIT, 'holding', addressOf('VAr_SF'), 0x8000);
  sim.simulator.setRegister(UNIT, 'holding', addressOf('PF_SF'), 99);
  sim.simulator.setRegister(UNIT, 'holding', addressOf('St'), 0xffff);
  broker = await Mosquitto.start();
  dir = mkdtempSync(join(tmpdir(), 'fieldgate-read-'));
  mkdirSync(join(dir, 'none'));
  const site = [
    'gateway:', `  stateDir: ${join(dir, 'state')}`, `  health: { enabled: true, port: ${await freePort()} }`, `  profileDirs: [${join(dir, 'none')}]`,
    `  cloud: { mqttUrl: "${broker.url}", projectKey: test-project, inbound: { maxKeys: 5000 } }`,
    'buses:', `  - { name: sim, kind: tcp, host: 127.0.0.1, port: ${sim.tcp!.port}, timeoutMs: 2000 }`,
    'devices:', siteDeviceBlock(UNIT, unit.placements, 'sim'), '    pollIntervalMs: 60000', '    cloud: { accessToken: inverter-token }',
  ].join('\n');
  writeFileSync(join(dir, 'site.yaml'), `${site}\n`);
  gateway = await startGateway(loadConfig(join(dir, 'site.yaml'), {}), { logger: silentLogger(), env: {}, notifier: createNotifier({}, silentLogger()) });
  const g = gateway;
  await waitFor(() => g.status().links[0]?.state === 'up', { what: 'the device link', timeoutMs: 30_000 });
  client = await mqtt.connectAsync(broker.url, { clientId: 'cloud-side' });
  client.on('message', (topic, payload: Buffer) => {
    const body = JSON.parse(payload.toString()) as { params: Record<string, unknown> };
    replies.set(topic.split('/').pop() ?? '', body.params);
  });
  await client.subscribeAsync('command/reply/+', { qos: 1 });
}, 90_000);

afterAll(async () => {
  await client?.endAsync();
  await gateway?.stop();
  await broker?.dispose();
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('read over MQTT from a served SunSpec inverter', () => {
  it('returns the asked points only, and names each absent one with why', async () => {
    const expected = (id: string) => unit.held.find((h) => h.point.id === id)!.expected as number;
    const reply = await command('read', { keys: ['W', 'A', 'VAr', 'PF', 'St'] });
    expect(reply).toEqual({
      W: expect.closeTo(expected('W'), 6),
      A: expect.closeTo(expected('A'), 6),
      [ABSENT_KEY]: {
        VAr: 'scale factor "VAr_SF": not implemented (holds -32768)',
        PF: 'scale factor "PF_SF" is 99, outside -10..10',
        St: 'not implemented (holds 65535)',
      },
    });
  });

  it('a factor asked for is returned with its point', async () => {
    const reply = await command('read', { keys: ['W_SF', 'W', 'VAr_SF'] });
    expect(Object.keys(reply)).toEqual(['W_SF', 'W', ABSENT_KEY]);
    expect(reply.W_SF).toBe(-1);
    expect(reply[ABSENT_KEY]).toEqual({ VAr_SF: expect.stringMatching(/^not implemented/) });
  });

  it('3,000 entries naming every point: each answered once, no more', async () => {
    const ids = unit.held.map((h) => h.point.id);
    const keys = Array.from({ length: 3000 }, (_, i) => ids[i % ids.length]);
    const reply = await command('read', { keys });
    const absent = reply[ABSENT_KEY] as Record<string, string>;
    const answered = [...Object.keys(reply).filter((k) => k !== ABSENT_KEY), ...Object.keys(absent)];
    expect(answered.sort()).toEqual([...ids].sort());
    // The simulator's own "not implemented" points and the three made absent above, nothing else.
    const sentinels = unit.held.filter((h) => h.expected === undefined).map((h) => h.point.id);
    expect(Object.keys(absent).sort()).toEqual([...sentinels, 'VAr', 'VAr_SF', 'PF', 'St'].sort());
    expect(JSON.stringify(reply).length).toBeLessThan(ids.length * 150);
  });

  it.each([
    { name: 'unknown ids', keys: ['W', 'ghost', 'W_SF2'], code: 422, message: 'unknown attribute(s): ghost, W_SF2' },
    { name: 'the absent key itself', keys: [ABSENT_KEY], code: 422, message: `unknown attribute(s): ${ABSENT_KEY}` },
    { name: '3,000 unknown ids', keys: Array.from({ length: 3000 }, (_, i) => `x${i}`), code: 422, message: 'unknown attribute(s): x0, x1, x2, x3, x4 and 2995 more' },
    { name: 'more entries than the key cap', keys: Array(5001).fill('W'), code: 400, message: 'message has 5001 keys, more than the limit of 5000' },
  ])('$name: refused with a short error', async ({ keys, code, message }) => {
    expect(await command('read', { keys })).toEqual({ error: { code, message } });
  });
});
