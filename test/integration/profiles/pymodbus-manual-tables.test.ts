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

/**
 * Profiles served, with the word order their documents give for 32- and 64-bit values: SMA's TI 3.5.4
 * ("Big Endian", high byte and word first), Fronius's SunSpec map (SunSpec: big-endian), Victron's list
 * (the GX's Modbus-TCP server, big-endian like every row of its xlsx).
 */
const SERVED: { profile: string; wordOrder: 'big' | 'little' }[] = [
  { profile: 'sma-sunny-tripower-3av-40', wordOrder: 'big' },
  { profile: 'sma-sunny-island', wordOrder: 'big' },
  { profile: 'fronius-datamanager', wordOrder: 'big' },
  { profile: 'victron-gx-vebus', wordOrder: 'big' },
  { profile: 'victron-gx-tank', wordOrder: 'big' },
  { profile: 'victron-gx-temperature', wordOrder: 'big' },
  { profile: 'victron-gx-meteo', wordOrder: 'big' },
];

let server: Child;
let gateway: GatewayHandle;
let dir: string;
let expected: Record<string, Record<string, number>>;

beforeAll(async () => {
  requirePythonModules(PYTHON, ['pymodbus']);
  dir = mkdtempSync(join(tmpdir(), 'fieldgate-manual-tables-'));
  const spec = SERVED.map((served, index) => ({ unit: index + 1, table: `${MANUAL}${served.profile}.json`, wordOrder: served.wordOrder }));
  writeFileSync(join(dir, 'serve.json'), JSON.stringify(spec));
  server = startChild(PYTHON, [SCRIPT, '--tcp', '0', '--serve', join(dir, 'serve.json'), '--expected', join(dir, 'expected.json')]);
  const port = await waitFor(() => {
    if (server.exited()) throw new Error(`pymodbus server exited: ${server.output()}`);
    return /READY (\d+)/.exec(server.output())?.[1];
  }, { what: 'pymodbus READY', timeoutMs: 30_000 });
  expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as Record<string, Record<string, number>>;
  const site = [
    'gateway:', `  stateDir: ${join(dir, 'state')}`, `  health: { enabled: true, port: ${await freePort()} }`, `  profileDirs: [${join(dir, 'none')}]`,
    'buses:', `  - { name: peer, kind: tcp, host: 127.0.0.1, port: ${port}, timeoutMs: 3000 }`,
    'devices:', ...SERVED.map((served, index) => `  - { name: unit-${index + 1}, bus: peer, unitId: ${index + 1}, profile: ${served.profile}, pollIntervalMs: 500 }`),
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
  it.each(SERVED.map((served, index) => [served.profile, index + 1] as const))('%s: every point decodes to the value derived from its table', async (profile, unit) => {
    const want = expected[String(unit)];
    expect(Object.keys(want).length).toBeGreaterThan(0);
    await waitFor(() => Object.keys(gateway.latestValues(`unit-${unit}`)).length >= Object.keys(want).length, { what: `values of ${profile}`, timeoutMs: 45_000 });
    const values = gateway.latestValues(`unit-${unit}`);
    expect(Object.keys(values).sort()).toEqual(Object.keys(want).sort());
    for (const [id, value] of Object.entries(want)) expect(values[id] as number, `${profile} ${id}`).toBeCloseTo(value, 6);
  });
});
