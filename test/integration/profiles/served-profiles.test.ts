// Every shipped profile, served by the simulator and polled by the daemon through a site file that
// names only the profile: each point reads and decodes to the value the simulator holds, and a
// point holding its "not implemented" value is absent, never a number.
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
import { placeProfiles, profileUnit, siteDeviceBlock, startSimulation, type ProfileUnit, type Simulation } from '../../../packages/simulator/src/index.js';
import { freePort } from '../../helpers/mosquitto.js';
import { waitFor } from '../../helpers/wait.js';

const library = loadProfiles([]).library;
const names = library.names();
const units = new Map<string, ProfileUnit>(names.map((name, index) => {
  const placed = placeProfiles([name], library);
  if (placed.problems.length > 0) throw new Error(placed.problems.join('; '));
  return [name, profileUnit(index + 1, placed.placements)];
}));
const deviceName = (name: string) => `unit-${units.get(name)!.spec.unit}`;

let sim: Simulation;
let gateway: GatewayHandle;
let dir: string;

beforeAll(async () => {
  sim = await startSimulation({ map: { units: [...units.values()].map((unit) => unit.spec) }, logger: silentLogger(), tcp: { host: '127.0.0.1', port: 0 } });
  dir = mkdtempSync(join(tmpdir(), 'fieldgate-profiles-'));
  const site = [
    'gateway:', `  stateDir: ${join(dir, 'state')}`, `  health: { enabled: true, port: ${await freePort()} }`, `  profileDirs: [${join(dir, 'none')}]`,
    'buses:', `  - { name: sim, kind: tcp, host: 127.0.0.1, port: ${sim.tcp!.port}, timeoutMs: 2000 }`,
    // The site overrides one device key of every profile (its poll period) so the test need not wait a minute.
    'devices:', ...[...units.values()].map((unit) => `${siteDeviceBlock(unit.spec.unit, unit.placements, 'sim')}\n    pollIntervalMs: 500`),
  ].join('\n');
  const file = join(dir, 'site.yaml');
  writeFileSync(file, `${site}\n`);
  // A listed profile directory that does not exist is an issue; this one is made empty.
  mkdirSync(join(dir, 'none'));
  const config = loadConfig(file, {});
  gateway = await startGateway(config, { logger: silentLogger(), env: {}, notifier: createNotifier({}, silentLogger()) });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('every shipped profile, served and polled through `profile:` alone', () => {
  it('ships at least 12 profiles', () => {
    expect(names.length).toBeGreaterThanOrEqual(12);
  });

  it.each(names)('%s: every point decodes to the value the simulator holds', async (name) => {
    const unit = units.get(name)!;
    const present = unit.held.filter((held) => held.expected !== undefined);
    await waitFor(() => Object.keys(gateway.latestValues(deviceName(name))).length >= present.length, { what: `values of ${name}`, timeoutMs: 30_000 });
    const values = gateway.latestValues(deviceName(name));
    for (const { point, expected } of unit.held) {
      if (expected === undefined) expect(values[point.id], `${point.id} holds "not implemented"`).toBeUndefined();
      else if (typeof expected === 'number') expect(values[point.id] as number, point.id).toBeCloseTo(expected, 6);
      else expect(values[point.id], point.id).toEqual(expected);
    }
    expect(Object.keys(values).sort()).toEqual(present.map((held) => held.point.id).sort());
  });

  it('carlogavazzi-em24: the lifetime total (003Eh) and the resettable partial (0042h) hold different values and each reads its own', () => {
    const unit = units.get('carlogavazzi-em24')!;
    const held = (id: string) => unit.held.find((h) => h.point.id === id)!;
    const total = held('import_energy');
    const partial = held('import_energy_partial');
    expect([total.point.address, partial.point.address]).toEqual([0x3e, 0x42]);
    // Different raw values in the simulator: a profile that swapped the two would read the other's value.
    expect(total.expected).not.toEqual(partial.expected);
    const values = gateway.latestValues(deviceName('carlogavazzi-em24'));
    expect(values.import_energy as number).toBeCloseTo(total.expected as number, 6);
    expect(values.import_energy_partial as number).toBeCloseTo(partial.expected as number, 6);
  });

  it('rehearses the absent case in every profile that has "not implemented" values', () => {
    for (const name of names) {
      const unit = units.get(name)!;
      const hasSentinels = unit.held.some((held) => held.point.notImplemented !== undefined);
      expect(unit.held.some((held) => held.expected === undefined), name).toBe(hasSentinels);
    }
  });
});
