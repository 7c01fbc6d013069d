// The EM24_E1 shows its identification code at 000Bh only to a read of that one register (its
// protocol, 2.4.1); a longer read there is V L3-L1. Against the simulator serving both meters: the
// E1 is identified and its V L3-L1 reads right, an RS-485 EM24-DIN named as the E1 is another
// model (and the E1 named as the EM24-DIN), each told by the other's code.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/ops/site-file.js';
import { loadProfiles } from '../../../src/ops/profile-library.js';
import { startGateway } from '../../../src/main.js';
import { createNotifier } from '../../../src/ops/systemd.js';
import type { GatewayHandle } from '../../../src/ops/gateway-handle.js';
import { silentLogger } from '../../../src/ops/log.js';
import { placeProfiles, profileUnit, startSimulation, type ProfileUnit, type Simulation } from '../../../packages/simulator/src/index.js';
import { freePort } from '../../helpers/mosquitto.js';
import { waitFor } from '../../helpers/wait.js';

let sim: Simulation;
let gateway: GatewayHandle;
let dir: string;
let e1: ProfileUnit;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fieldgate-em24-'));
  const library = loadProfiles([]).library;
  e1 = profileUnit(1, placeProfiles(['carlogavazzi-em24-e1'], library).placements);
  const din = profileUnit(2, placeProfiles(['carlogavazzi-em24'], library).placements);
  const e1Again = profileUnit(3, placeProfiles(['carlogavazzi-em24-e1'], library).placements);
  sim = await startSimulation({ map: { units: [e1.spec, din.spec, e1Again.spec] }, logger: silentLogger(), tcp: { host: '127.0.0.1', port: 0 } });
  const site = join(dir, 'site.yaml');
  writeFileSync(site, [
    'gateway:', `  stateDir: ${join(dir, 'state')}`, `  health: { enabled: true, port: ${await freePort()} }`,
    'buses:', `  - { name: sim, kind: tcp, host: 127.0.0.1, port: ${sim.tcp!.port}, timeoutMs: 500 }`,
    'devices:',
    '  - { name: e1, bus: sim, unitId: 1, profile: carlogavazzi-em24-e1, pollIntervalMs: 300 }',
    '  - { name: din-named-e1, bus: sim, unitId: 2, profile: carlogavazzi-em24-e1, pollIntervalMs: 300 }',
    '  - { name: e1-named-din, bus: sim, unitId: 3, profile: carlogavazzi-em24, pollIntervalMs: 300 }',
  ].join('\n') + '\n');
  gateway = await startGateway(loadConfig(site, {}), { logger: silentLogger(), env: {}, notifier: createNotifier({}, silentLogger()) });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const identification = (name: string) => gateway.status().devices.find((d) => d.name === name)!.identification;

describe('EM24_E1 identification (000Bh, read alone)', () => {
  it('identifies the E1, and its V L3-L1 (000Ah-000Bh) is the voltage, not the code', async () => {
    await waitFor(() => identification('e1')?.state === 'identified' && gateway.latestValues('e1').voltage_l3_l1 !== undefined, { what: 'e1 identified and polled', timeoutMs: 20_000 });
    const held = e1.held.find((h) => h.point.id === 'voltage_l3_l1')!;
    expect(gateway.latestValues('e1').voltage_l3_l1).toBe(held.expected);
    expect(held.expected).not.toBe(1648 / 10);
  });

  it('an RS-485 EM24-DIN named as the E1 is another model, named by its code', async () => {
    await waitFor(() => identification('din-named-e1')?.state === 'other-model', { what: 'the DIN told apart', timeoutMs: 20_000 });
    expect(identification('din-named-e1')).toMatchObject({ state: 'other-model', profiles: ['carlogavazzi-em24-e1'], identifiedAs: ['carlogavazzi-em24'] });
    expect(Object.keys(gateway.latestValues('din-named-e1'))).toEqual([]);
  });

  it('the E1 named as the RS-485 EM24-DIN is another model too', async () => {
    await waitFor(() => identification('e1-named-din')?.state === 'other-model', { what: 'the E1 told apart', timeoutMs: 20_000 });
    expect(identification('e1-named-din')).toMatchObject({ state: 'other-model', profiles: ['carlogavazzi-em24'], identifiedAs: ['carlogavazzi-em24-e1'] });
  });
});
