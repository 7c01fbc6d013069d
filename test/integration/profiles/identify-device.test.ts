// The daemon checks that a device named by a profile with identification is that profile's model,
// against the simulator serving the identification registers: the right model is polled; another
// model is reported once (log with both names, /status) and not polled; `identify: false` polls it
// anyway; a unit that refuses the registers is polled with a warning; a silent unit is offline, not
// "unverified"; after a device was offline its model is checked again (a meter swapped).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/ops/site-file.js';
import { loadProfiles } from '../../../src/ops/profile-library.js';
import { startGateway } from '../../../src/main.js';
import { createNotifier } from '../../../src/ops/systemd.js';
import type { GatewayHandle } from '../../../src/ops/gateway-handle.js';
import { silentLogger } from '../../../src/ops/log.js';
import { placeProfiles, profileUnit, startSimulation, type Simulation } from '../../../packages/simulator/src/index.js';
import { freePort } from '../../helpers/mosquitto.js';
import { waitFor } from '../../helpers/wait.js';
import { captureLogger, type CapturedLog } from '../../helpers/capture-logger.js';
import { runCli } from '../../helpers/run-cli.js';
import { writeIdentifiedProfiles } from './identified-profiles.js';

let sim: Simulation;
let gateway: GatewayHandle;
let dir: string;
let site: string;
let log: CapturedLog;

const OTHER = 'device identifies as another model: not polled';
const UNVERIFIED = 'device did not identify itself: polled as its profile';
const IDENTIFIED = 'device identified as its profile\'s model';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fieldgate-identify-'));
  const profiles = join(dir, 'profiles');
  mkdirSync(profiles);
  writeIdentifiedProfiles(profiles);
  const library = loadProfiles([profiles]).library;
  const unit = (id: number, name: string) => profileUnit(id, placeProfiles([name], library).placements).spec;
  // Unit 5 is a PM1 whose firmware has no identification registers: they are past its register space.
  const bare = unit(5, 'acme-pm1');
  const noIdentification = { ...bare, sizes: { holding: 16, input: 16 }, values: bare.values.filter((v) => v.address < 16) };
  sim = await startSimulation({
    map: { units: [unit(1, 'acme-pm1'), unit(2, 'acme-pm2'), unit(6, 'acme-pm2'), noIdentification, unit(7, 'acme-pm1'), unit(9, 'sunspec-inverter-1ph')] },
    logger: silentLogger(), tcp: { host: '127.0.0.1', port: 0 },
  });
  const device = (name: string, unitId: number, extra = '') => `  - { name: ${name}, bus: sim, unitId: ${unitId}, profile: acme-pm1, pollIntervalMs: 300${extra} }`;
  site = join(dir, 'site.yaml');
  writeFileSync(site, [
    'gateway:', `  stateDir: ${join(dir, 'state')}`, `  health: { enabled: true, port: ${await freePort()} }`, `  profileDirs: [${profiles}]`,
    'buses:', `  - { name: sim, kind: tcp, host: 127.0.0.1, port: ${sim.tcp!.port}, timeoutMs: 300 }`,
    'devices:',
    device('right', 1), device('wrong', 2), device('trusted', 6, ', identify: false'), device('unverified', 5), device('absent', 3), device('swapped', 7),
    // A single-phase SunSpec inverter named as a three-phase one: the model's ID register tells.
    '  - { name: inverter, bus: sim, unitId: 9, profile: [sunspec-common, sunspec-inverter-3ph], pollIntervalMs: 300 }',
  ].join('\n') + '\n');
  log = captureLogger();
  gateway = await startGateway(loadConfig(site, {}), { logger: log.logger, env: {}, notifier: createNotifier({}, silentLogger()) });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const deviceStatus = (name: string) => gateway.status().devices.find((d) => d.name === name)!;
const linesFor = (msg: string, device: string) => log.lines().filter((l) => l.msg === msg && l.device === device);

describe('identification at start', () => {
  it('polls the right model and says it is identified', async () => {
    await waitFor(() => Object.keys(gateway.latestValues('right')).length === 2, { what: 'values of right', timeoutMs: 20_000 });
    expect(deviceStatus('right').identification).toEqual({ state: 'identified', profiles: ['acme-pm1'] });
    expect(linesFor(IDENTIFIED, 'right')).toHaveLength(1);
  });

  it('does not poll another model, and reports it once with both names', async () => {
    await waitFor(() => deviceStatus('wrong').identification?.state === 'other-model', { what: 'wrong identified as another model', timeoutMs: 20_000 });
    // Several periods later: still not polled, still reported once.
    await waitFor(() => Object.keys(gateway.latestValues('right')).length === 2 && (gateway.status().devices.find((d) => d.name === 'right')?.cyclesWithValues ?? 0) >= 4, { what: 'a few cycles', timeoutMs: 20_000 });
    const status = deviceStatus('wrong');
    expect(status.identification).toMatchObject({ state: 'other-model', profiles: ['acme-pm1'], identifiedAs: ['acme-pm2'] });
    expect(status.identification!.detail).toBe('model code is 200, the profile\'s model shows 100');
    expect(status.online).toBe(false);
    expect(gateway.latestValues('wrong')).toEqual({});
    const lines = linesFor(OTHER, 'wrong');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, profile: 'acme-pm1', identifiedAs: ['acme-pm2'] });
  });

  it('tells a SunSpec model from another by its ID register', async () => {
    await waitFor(() => deviceStatus('inverter').identification?.state === 'other-model', { what: 'inverter identified as another model', timeoutMs: 20_000 });
    expect(deviceStatus('inverter').identification).toMatchObject({ profiles: ['sunspec-common', 'sunspec-inverter-3ph'], identifiedAs: ['sunspec-inverter-1ph'] });
    expect(deviceStatus('inverter').identification!.detail).toMatch(/^ID \(model identifier, offset 0 of model 103; the definition's value 103\) is 101, the profile's model shows 103$/);
    expect(gateway.latestValues('inverter')).toEqual({});
  });

  it('polls a device with identify: false whatever it says', async () => {
    await waitFor(() => Object.keys(gateway.latestValues('trusted')).length === 2, { what: 'values of trusted', timeoutMs: 20_000 });
    expect(deviceStatus('trusted').identification).toBeUndefined();
  });

  it('polls a device that refuses its identification registers, with one warning', async () => {
    await waitFor(() => Object.keys(gateway.latestValues('unverified')).length === 2, { what: 'values of unverified', timeoutMs: 20_000 });
    expect(deviceStatus('unverified').identification).toMatchObject({ state: 'unverified', profiles: ['acme-pm1'] });
    expect(deviceStatus('unverified').identification!.detail).toMatch(/^model code: refused \(Illegal data address\)/);
    expect(linesFor(UNVERIFIED, 'unverified')).toHaveLength(1);
  });

  it('takes a silent unit for offline, not for another model or unverified', async () => {
    await waitFor(() => (deviceStatus('absent').online === false && log.lines().some((l) => l.msg === 'device offline' && l.device === 'absent')), { what: 'absent offline', timeoutMs: 20_000 });
    expect(deviceStatus('absent').identification).toBeUndefined();
    expect(linesFor(OTHER, 'absent')).toHaveLength(0);
    expect(linesFor(UNVERIFIED, 'absent')).toHaveLength(0);
  });
});

describe('identification after the device was offline', () => {
  it('checks again: a meter swapped for another model while away is not polled as the old one', async () => {
    await waitFor(() => Object.keys(gateway.latestValues('swapped')).length === 2, { what: 'values of swapped', timeoutMs: 20_000 });
    expect(deviceStatus('swapped').identification?.state).toBe('identified');
    sim.simulator.setFault(7, { timeout: true });
    await waitFor(() => deviceStatus('swapped').online === false, { what: 'swapped offline', timeoutMs: 20_000 });
    sim.simulator.setRegister(7, 'holding', 256, 200);
    sim.simulator.clearFault(7);
    await waitFor(() => deviceStatus('swapped').identification?.state === 'other-model', { what: 'swapped re-identified', timeoutMs: 20_000 });
    expect(deviceStatus('swapped').identification?.identifiedAs).toEqual(['acme-pm2']);
    expect(linesFor(OTHER, 'swapped')).toHaveLength(1);
    // The original model back: polled again, and said so once more.
    sim.simulator.setRegister(7, 'holding', 256, 100);
    await waitFor(() => deviceStatus('swapped').identification?.state === 'identified' && deviceStatus('swapped').online, { what: 'swapped back', timeoutMs: 20_000 });
    expect(linesFor(IDENTIFIED, 'swapped')).toHaveLength(2);
  });

  it('status shows the doubtful models, and poll --once refuses the other model with one row and a hint', async () => {
    const poll = await runCli(['poll', site, '--once']);
    expect(poll.code).toBe(69);
    expect(poll.out).toMatch(/wrong +\(all 2 points\) +holding:256 +ERROR another model: not polled/);
    expect(poll.out).toMatch(/right +voltage +input:0 +float32 +\d/);
    expect(poll.err).toContain('fieldgate poll: wrong: identifies as acme-pm2, not acme-pm1: not polled (model code is 200, the profile\'s model shows 100)');
    expect(poll.err).toContain(`fieldgate scan --identify --bus 127.0.0.1:${sim.tcp!.port} --units 2\` names the profile it matches`);
  });
});
