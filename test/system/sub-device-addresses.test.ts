// A gateway-mode site that grows: upgraded from a version that addressed sub-devices by bare unit id
// (one bus), it gains a second bus and every existing device keeps the address the cloud has it
// bound under, at the reload and after a restart; a site that would take one of those addresses
// for another device is refused by reload and by `validate`, naming both devices and addresses; so is
// a renamed device that would take its old name's address, until the address is written out.
// Real CLI as a child process, the emulator as the cloud, two simulated Modbus TCP buses.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../packages/emulator/src/index.js';
import { parseSeed } from '../../packages/emulator/src/state/seed.js';
import { parseSimMap, startSimulation, type Simulation } from '../../packages/simulator/src/index.js';
import { silentLogger } from '../../src/ops/log.js';
import { TSX_FROM_SOURCE } from '../helpers/child.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait.js';
import { killChildren } from './delivery-rig.js';

/** Cloud device id, its binding: the first three as a version before the record bound them (one bus, bare unit ids). */
const BOUND = [['sub-a1', '1'], ['sub-a2', '2'], ['sub-a3', '3'], ['sub-b1', 'b/1']] as const;

const SEED = `
project: { id: prj-addr, name: Address rig, project_key: pk-addr }
device_types:
  - { id: type-gateway, name: fieldgate, kind: gateway, conn_protocol: mqtt, conn_type: "3" }
  - { id: type-sub, name: counter, kind: sub_device, conn_protocol: mqtt }
devices:
  - { id: dev-fieldgate, name: fieldgate, type: type-gateway, device_key: fieldgate-1, access_token: gw-token }
${BOUND.map(([id, addr]) => `  - { id: ${id}, name: ${id}, type: type-sub, device_key: ${id}, access_token: ${id}-token, gateway: dev-fieldgate, sub_device_addr: "${addr}" }`).join('\n')}
`;

const SIM_MAP = `units:\n${[1, 2, 3].map((u) => `  ${u}:\n    size: { holding: 100 }\n    dynamic:\n      - { table: holding, address: 5, type: uint32, counter: { perSecond: 10 } }\n`).join('')}`;

interface SiteDevice { name: string; bus: 'a' | 'b'; unit: number; address?: string }

describe('sub-device addresses of a growing gateway-mode site', () => {
  let emulator: Emulator;
  let sims: Simulation[];
  let dir: string;
  let child: ChildProcess | undefined;
  let output = '';
  const sitePath = () => join(dir, 'site.yaml');
  const stateDir = () => join(dir, 'state');

  function writeSite(devices: SiteDevice[], buses: Array<'a' | 'b'>): void {
    const busLines = buses.map((bus) => `  - { name: ${bus}, kind: tcp, host: 127.0.0.1, port: ${sims[bus === 'a' ? 0 : 1].tcp?.port ?? 0}, timeoutMs: 1000 }`).join('\n');
    const deviceLines = devices.map((d) => `
  - name: ${d.name}
    bus: ${d.bus}
    unitId: ${d.unit}
    pollIntervalMs: 200ms
    cloud: { accessToken: ${d.name}-token${d.address ? `, subDeviceAddress: "${d.address}"` : ''} }
    points:
      - { id: seq, table: holding, address: 5, type: uint32, report: { mode: always } }`).join('');
    writeFileSync(sitePath(), `
gateway:
  stateDir: ${stateDir()}
  logLevel: info
  health: { enabled: false }
  cloud:
    mode: gateway
    identity: { accessToken: gw-token }
    mqttUrl: mqtt://127.0.0.1:${emulator.mqttPort}
    apiBaseUrl: http://127.0.0.1:${emulator.httpPort}
    projectKey: pk-addr
    syncPeriodMs: 0
    reconnect: { initialMs: 100, maxMs: 1000, jitter: 0.1 }
buses:
${busLines}
devices:${deviceLines}
`);
  }

  function start(): void {
    output = '';
    child = spawn(process.execPath, [...TSX_FROM_SOURCE, 'test/system/fixtures/cli.ts', 'run', '--config', sitePath()], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH } });
    child.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString('utf8'); });
    child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString('utf8'); });
  }

  async function stop(): Promise<void> {
    const running = child;
    if (!running || running.exitCode !== null) return;
    await new Promise((resolve) => { running.once('exit', resolve); running.kill('SIGTERM'); });
  }

  const stored = (id: string) => (emulator.state.devices.get(id)?.history ?? []).filter((h) => h.name === 'seq').length;

  async function reportsGrow(ids: readonly string[], what: string): Promise<void> {
    const before = new Map(ids.map((id) => [id, stored(id)]));
    await waitFor(() => {
      if (child?.exitCode !== null) throw new Error(`daemon exited: ${output}`);
      return ids.every((id) => stored(id) >= (before.get(id) ?? 0) + 3);
    }, { timeoutMs: 60_000, what: `${what}: new reports of ${ids.join(', ')}` });
  }

  async function reload(): Promise<{ outcome: string; problems: Array<{ path: string; message: string }> }> {
    const read = () => JSON.parse(readFileSync(join(stateDir(), 'config-state.json'), 'utf8')) as { attempt: number; outcome: string; problems: Array<{ path: string; message: string }> };
    const attempt = read().attempt;
    child?.kill('SIGHUP');
    return waitFor(() => { const state = read(); return state.attempt > attempt ? state : undefined; }, { timeoutMs: 60_000, what: 'the reload answer' });
  }

  const record = () => (JSON.parse(readFileSync(join(stateDir(), 'sub-device-addresses.json'), 'utf8')) as { addresses: Record<string, string> }).addresses;
  const ONE_BUS: SiteDevice[] = [{ name: 'sub-a1', bus: 'a', unit: 1 }, { name: 'sub-a2', bus: 'a', unit: 2 }, { name: 'sub-a3', bus: 'a', unit: 3 }];
  const TWO_BUSES: SiteDevice[] = [...ONE_BUS, { name: 'sub-b1', bus: 'b', unit: 1 }];

  beforeAll(async () => {
    emulator = await startEmulator({ httpPort: 0, mqttPort: 0, tcpPort: 0, host: '127.0.0.1', seed: parseSeed(SEED, Date.now()), logger: silentLogger() });
    const map = parseSimMap(SIM_MAP);
    if (!map.ok) throw new Error(map.problems.join('; '));
    sims = await Promise.all([0, 1].map(() => startSimulation({ map: map.map, logger: silentLogger(), tcp: { host: '127.0.0.1', port: 0 } })));
    dir = mkdtempSync(join(tmpdir(), 'fg-sub-addr-'));
    // What a version before the record leaves in its state directory: an outbox, no address record.
    mkdirSync(stateDir(), { recursive: true });
    writeFileSync(join(stateDir(), 'outbox.sqlite'), '');
  });

  afterAll(async () => {
    await killChildren(child ? [child] : []);
    await Promise.all((sims ?? []).map((s) => s.close()));
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every address across the upgrade, a second bus and a restart; refuses a site that takes one for another device', async () => {
    writeSite(ONE_BUS, ['a']);
    start();
    await reportsGrow(['sub-a1', 'sub-a2', 'sub-a3'], 'after the upgrade');
    expect(output).toContain('sub-device addresses taken over from the previous version');
    expect(record()).toEqual({ 'sub-a1': '1', 'sub-a2': '2', 'sub-a3': '3' });

    writeSite(TWO_BUSES, ['a', 'b']);
    expect(await reload()).toMatchObject({ outcome: 'applied' });
    await reportsGrow(['sub-a1', 'sub-a2', 'sub-a3', 'sub-b1'], 'after the second bus');
    expect(record()).toEqual({ 'sub-a1': '1', 'sub-a2': '2', 'sub-a3': '3', 'sub-b1': 'b/1' });

    await stop();
    start();
    await reportsGrow(['sub-a1', 'sub-a2', 'sub-a3', 'sub-b1'], 'after a restart');
    expect(output).not.toContain('taken over from the previous version');

    // A new device explicitly on "2": sub-a2 keeps "2" (announced), so the reload is refused naming both.
    writeSite([...TWO_BUSES, { name: 'sub-b2', bus: 'b', unit: 2, address: '2' }], ['a', 'b']);
    const refused = await reload();
    expect(refused.outcome).toBe('refused');
    const kept = 'keeps the sub-device address "2" it was announced under (state directory) rather than move to "a/2" unasked, but devices[4] (sub-b2) sets it in cloud.subDeviceAddress';
    expect(refused.problems).toEqual(expect.arrayContaining([{ path: 'devices[1].cloud', message: expect.stringContaining(kept) }]));
    const validated = await runCli(['validate', sitePath()]);
    expect(validated.code).toBe(78);
    expect(validated.err).toContain(`devices[1].cloud: ${kept}`);
    expect(validated.err).toContain('devices[4].cloud.subDeviceAddress: sub-device address "2" is the one devices[1] (sub-a2) was announced under');
    await reportsGrow(['sub-a1', 'sub-a2', 'sub-a3', 'sub-b1'], 'after the refused reload');
    expect(output).not.toContain('cloud refused a gateway message');

    // A rename: "sub-b1-new" on b/1 would take "b/1" by default, which the cloud binds to sub-b1.
    const RENAMED: SiteDevice[] = [...ONE_BUS, { name: 'sub-b1-new', bus: 'b', unit: 1 }];
    const taken = 'devices[3] (sub-b1-new) would take the sub-device address "b/1" that device "sub-b1" was announced under';
    writeSite(RENAMED, ['a', 'b']);
    const renamed = await reload();
    expect(renamed.outcome).toBe('refused');
    expect(renamed.problems).toEqual([{ path: 'devices[3].cloud', message: expect.stringContaining(taken) }]);

    // Removed first, renamed later: the record keeps the address released, with when it was last used.
    writeSite(ONE_BUS, ['a', 'b']);
    expect(await reload()).toMatchObject({ outcome: 'applied' });
    const released = (JSON.parse(readFileSync(join(stateDir(), 'sub-device-addresses.json'), 'utf8')) as { released: Record<string, { device: string; lastUsedAt: string }> }).released;
    expect(released).toEqual({ 'b/1': { device: 'sub-b1', lastUsedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) } });
    writeSite(RENAMED, ['a', 'b']);
    const later = await reload();
    expect(later.outcome).toBe('refused');
    expect(later.problems).toEqual([{ path: 'devices[3].cloud', message: expect.stringContaining(`${taken} (state directory, last used ${released['b/1'].lastUsedAt})`) }]);
    const laterValidated = await runCli(['validate', sitePath()]);
    expect(laterValidated.code).toBe(78);
    expect(laterValidated.err).toContain(`devices[3].cloud: ${taken}`);

    // Written out: a deliberate re-assignment, applied, logged once, and the record updated.
    writeSite([...ONE_BUS, { name: 'sub-b1-new', bus: 'b', unit: 1, address: 'b/1' }], ['a', 'b']);
    expect((await runCli(['validate', sitePath()])).code).toBe(0);
    expect(await reload()).toMatchObject({ outcome: 'applied' });
    await reportsGrow(['sub-a1', 'sub-b1'], 'after the re-assignment');
    expect(output.split('\n').filter((line) => line.includes('sub-device address re-assigned to another device'))).toEqual([
      expect.stringMatching(/"device":"sub-b1-new","address":"b\/1","from":"sub-b1"/),
    ]);
    expect(record()).toEqual({ 'sub-a1': '1', 'sub-a2': '2', 'sub-a3': '3', 'sub-b1-new': 'b/1' });
    expect(JSON.parse(readFileSync(join(stateDir(), 'sub-device-addresses.json'), 'utf8')).released).toEqual({});
  }, 300_000);
});
