// Profiles against their manufacturers' tables through an independent Modbus server: pymodbus serves
// each table of test/fixtures/profiles/manual at its documented addresses, with values encoded by
// the Python script from the table's formats (not by fieldgate's codec or simulator); the daemon
// polls each device through a site file naming only the profile, and every point must decode to the
// value the script derived from the table (raw x resolution x unit change, sign as documented).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/ops/site-file.js';
import { loadProfiles } from '../../../src/ops/profile-library.js';
import { startGateway } from '../../../src/main.js';
import { createNotifier } from '../../../src/ops/systemd.js';
import type { GatewayHandle } from '../../../src/ops/gateway-handle.js';
import { silentLogger } from '../../../src/ops/log.js';
import { startChild, type Child } from '../../helpers/child.js';
import { freePort } from '../../helpers/mosquitto.js';
import { requirePythonModules } from '../../helpers/peers.js';
import { PYTHON } from '../../helpers/pymodbus.js';
import { waitFor } from '../../helpers/wait.js';

const SCRIPT = fileURLToPath(new URL('../../helpers/pymodbus_manual_tables.py', import.meta.url));
const MANUAL = fileURLToPath(new URL('../../fixtures/profiles/manual/', import.meta.url));

const library = loadProfiles([]).library;

/** Register tables of the non-SunSpec kind (SunSpec models are checked by scan-sunspec and served-profiles). */
const tabled = library.names().filter((name) => !library.get(name)!.sunspec);
/** Tables whose every row is of a format the script does not serve (coils and discrete inputs). */
const UNSERVED = new Set(['waveshare-modbus-rtu-io-8ch', 'waveshare-modbus-rtu-relay']);

/** Identification is served where its registers are no point's (sungrow-sh's device type code and the EM24 E1's readAlone code are). */
function served(name: string, unit: number) {
  const profile = library.get(name)!;
  const pointWords = new Set(profile.points.flatMap((p) => Array.from({ length: 4 }, (_, i) => `${String(p.table)}:${Number(p.address) + i}`)));
  const identification = (profile.identification?.registers ?? []).length > 0
    && profile.identification!.registers.every((r) => !pointWords.has(`${r.point.table}:${r.point.address}`));
  return { unit, profile: name, table: `${MANUAL}${name}.json`, identification };
}

const SERVED = tabled.filter((name) => !UNSERVED.has(name)).map((name, index) => served(name, index + 1));

let server: Child;
let gateway: GatewayHandle;
let dir: string;
let expected: Record<string, { values: Record<string, number>; skipped: string[] }>;

beforeAll(async () => {
  requirePythonModules(PYTHON, ['pymodbus']);
  dir = mkdtempSync(join(tmpdir(), 'fieldgate-manual-tables-'));
  writeFileSync(join(dir, 'serve.json'), JSON.stringify(SERVED));
  server = startChild(PYTHON, [SCRIPT, '--tcp', '0', '--serve', join(dir, 'serve.json'), '--expected', join(dir, 'expected.json')]);
  const port = await waitFor(() => {
    if (server.exited()) throw new Error(`pymodbus server exited: ${server.output()}`);
    return /READY (\d+)/.exec(server.output())?.[1];
  }, { what: 'pymodbus READY', timeoutMs: 30_000 });
  expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as typeof expected;
  const site = [
    'gateway:', `  stateDir: ${join(dir, 'state')}`, `  health: { enabled: true, port: ${await freePort()} }`, `  profileDirs: [${join(dir, 'none')}]`,
    'buses:', `  - { name: peer, kind: tcp, host: 127.0.0.1, port: ${port}, timeoutMs: 3000 }`,
    'devices:', ...SERVED.map((entry) => `  - { name: unit-${entry.unit}, bus: peer, unitId: ${entry.unit}, profile: ${entry.profile}, pollIntervalMs: 500${entry.identification ? '' : ', identify: false'} }`),
  ].join('\n');
  writeFileSync(join(dir, 'site.yaml'), `${site}\n`);
  mkdirSync(join(dir, 'none'));
  gateway = await startGateway(loadConfig(join(dir, 'site.yaml'), {}), { logger: silentLogger(), env: {}, notifier: createNotifier({}, silentLogger()) });
}, 90_000);

afterAll(async () => {
  await gateway?.stop();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('profiles read from an independent pymodbus server serving the manufacturers\' tables', () => {
  it('serves the tables of the profiles added with the SMA, Fronius and Victron GX lists, with their identification', () => {
    for (const name of ['sma-sunny-tripower-3av-40', 'sma-sunny-island', 'fronius-datamanager', 'victron-gx-vebus', 'victron-gx-tank', 'victron-gx-temperature', 'victron-gx-meteo']) {
      const entry = SERVED.find((e) => e.profile === name);
      expect(entry, name).toBeDefined();
      if (library.get(name)!.identification) expect(entry!.identification, name).toBe(true);
    }
  });

  it.each(SERVED.map((entry) => [entry.profile, entry.unit] as const))('%s: every point decodes to the value derived from its table', async (profile, unit) => {
    const { values: want, skipped } = expected[String(unit)];
    expect(Object.keys(want).length).toBeGreaterThan(0);
    await waitFor(() => Object.keys(want).every((id) => id in gateway.latestValues(`unit-${unit}`)), { what: `values of ${profile}`, timeoutMs: 45_000 });
    const values = gateway.latestValues(`unit-${unit}`);
    // Every value the daemon reports is a served row's or a row the script does not encode (strings).
    expect(Object.keys(values).filter((id) => !(id in want) && !skipped.includes(id))).toEqual([]);
    for (const [id, value] of Object.entries(want)) expect(values[id] as number, `${profile} ${id}`).toBeCloseTo(value, 6);
  });
});
