// The whole daemon against the simulator over Modbus TCP, with holes in the device maps: a hole
// in a gap inside a merged request (split learned), a hole under a point (that point failing, the
// rest reporting), and a device that refuses everything (not online). /status, /healthz and the
// logs must tell, and a repaired map must recover.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkConfig } from '../../../src/ops/site-file.js';
import { startGateway } from '../../../src/main.js';
import { createNotifier } from '../../../src/ops/systemd.js';
import type { GatewayHandle } from '../../../src/ops/gateway-handle.js';
import { silentLogger } from '../../../src/ops/log.js';
import { parseSimMap, startSimulation, type Simulation } from '../../../src/simulator/index.js';
import type { GatewayStatus } from '../../../src/ops/status.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { freePort } from '../../helpers/mosquitto.js';
import { waitFor } from '../../helpers/wait.js';

const ADDRESSES = [...Array.from({ length: 17 }, (_, i) => 10 + i), ...Array.from({ length: 6 }, (_, i) => 28 + i)]; // 10..26, 28..33
const VALUES = Array.from({ length: 40 }, (_, i) => i * 7 + 3);
const hole = (unit: number, address?: number) => `
  ${unit}:
    holding: [{ start: 0, values: [${VALUES.join(', ')}] }]
    faults: { exception: { code: 2${address === undefined ? '' : `, table: holding, address: ${address}, count: 1`} } }`;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('read plans learn the holes in a device map', () => {
  it('reports every other point, shows the failing ones, logs what was learned once, and takes a device with no readable point offline', async () => {
    const map = parseSimMap(`units:${hole(1, 27)}${hole(2, 20)}${hole(3)}\n`);
    if (!map.ok) throw new Error(map.problems.join('; '));
    const sim: Simulation = await startSimulation({ map: map.map, logger: silentLogger(), tcp: { host: '127.0.0.1', port: 0 } });
    cleanups.push(() => sim.close());
    const stateDir = mkdtempSync(join(tmpdir(), 'fieldgate-holes-'));
    cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));

    const points = ADDRESSES.map((address) => ({ id: `r${address}`, table: 'holding', address }));
    const device = (name: string, unitId: number) => ({ name, bus: 'plc', unitId, pollIntervalMs: 200, limits: { maxGap: 8, reprobeFailedMs: 1000 }, points });
    const checked = checkConfig({
      gateway: { stateDir, health: { enabled: true, port: await freePort() } },
      buses: [{ name: 'plc', kind: 'tcp', host: '127.0.0.1', port: sim.tcp!.port, timeoutMs: 1000 }],
      devices: [device('gap', 1), device('under', 2), device('refuses', 3)],
    }, {});
    expect(checked.issues).toEqual([]);
    const log = captureLogger();
    const gateway: GatewayHandle = await startGateway(checked.config!, { logger: log.logger, env: {}, notifier: createNotifier({}, silentLogger()) });
    cleanups.push(() => gateway.stop());
    const base = `http://127.0.0.1:${gateway.healthPort}`;
    const status = async () => (await (await fetch(`${base}/status`)).json()) as GatewayStatus;
    const deviceStatus = async (name: string) => (await status()).devices.find((d) => d.name === name)!;

    const expected = (skip: number[] = []) => Object.fromEntries(ADDRESSES.filter((a) => !skip.includes(a)).map((a) => [`r${a}`, VALUES[a]]));
    await waitFor(() => Object.keys(gateway.latestValues('gap')).length === 23 && Object.keys(gateway.latestValues('under')).length === 22,
      { what: 'values of both devices', timeoutMs: 15_000 });
    // The values are the device's, point for point; the hole's point has none.
    expect({ ...gateway.latestValues('gap') }).toEqual(expected());
    expect({ ...gateway.latestValues('under') }).toEqual(expected([20]));

    const gap = await deviceStatus('gap');
    expect(gap).toMatchObject({ online: true, failingPoints: [], learned: [{ table: 'holding', kind: 'split', address: expect.any(Number), reason: 'exception 2 (Illegal data address)' }] });
    expect(gap.learned![0]!.address).toBeGreaterThan(26); // the cut lies across the hole at 27
    expect(gap.learned![0]!.address).toBeLessThanOrEqual(28);
    const under = await deviceStatus('under');
    expect(under).toMatchObject({
      online: true, pointFailures: 1,
      failingPoints: [{ point: 'r20', table: 'holding', address: 20, error: 'ModbusExceptionError', exceptionCode: 2 }],
      learned: [{ table: 'holding', kind: 'isolated', address: 20, point: 'r20' }],
    });
    // Its first cycle bisects down to every single point, each refused.
    const refuses = await waitFor(async () => {
      const s = await deviceStatus('refuses');
      return s.failingPoints?.length === 23 && s;
    }, { what: 'every point of "refuses" failing', timeoutMs: 15_000 });
    expect(refuses.online).toBe(false);
    expect(refuses.learned).toHaveLength(23);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain('fieldgate_device_failing_points{device="under"} 1');
    expect(metrics).toContain('fieldgate_device_failing_points{device="refuses"} 23');

    // Logged once each, however many cycles ran.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const lines = log.lines();
    expect(lines.filter((l) => l.msg === 'read plan learned: request split' && l.device === 'gap')).toHaveLength(1);
    expect(lines.filter((l) => l.msg === 'point failing' && l.device === 'under')).toEqual([
      expect.objectContaining({ point: 'r20', address: 20, exceptionCode: 2, exceptionName: 'Illegal data address' }),
    ]);
    expect(lines.filter((l) => l.msg === 'device offline' && l.device === 'refuses')).toEqual([
      expect.objectContaining({ reason: expect.stringMatching(/^no point reads/) }),
    ]);
    expect(lines.filter((l) => l.msg === 'device offline' && l.device !== 'refuses')).toEqual([]);

    // Every device refusing everything: none is online, /healthz says so.
    sim.simulator.setFault(1, { exception: { code: 2 } });
    sim.simulator.setFault(2, { exception: { code: 2 } });
    await waitFor(async () => (await status()).devices.every((d) => !d.online), { what: 'all devices offline', timeoutMs: 15_000 });
    const unhealthy = await fetch(`${base}/healthz`);
    expect(unhealthy.status).toBe(503);
    expect(await unhealthy.json()).toMatchObject({ reasons: ['no device is online'] });

    // The maps repaired: the isolated points are probed again and every point reports.
    for (const unit of [1, 2, 3]) sim.simulator.clearFault(unit);
    await waitFor(async () => (await status()).devices.every((d) => d.online && d.failingPoints!.length === 0),
      { what: 'all devices recovered', timeoutMs: 20_000 });
    await waitFor(() => Object.keys(gateway.latestValues('refuses')).length === 23, { what: 'values of the repaired device', timeoutMs: 10_000 });
    expect({ ...gateway.latestValues('refuses') }).toEqual(expected());
    expect({ ...gateway.latestValues('under') }).toEqual(expected());
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });
});
