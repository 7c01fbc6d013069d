// The command path plans with what the poller learned: the simulator (Modbus TCP) refuses a hole
// between two points the planner would merge. After the poller learned the split, a `read` of the
// points around the hole and a push's read-back (one key refused above its maximum) both succeed,
// without a single refused request, and the refused key is corrected from the device.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkConfig } from '../../../src/ops/site-file.js';
import { silentLogger } from '../../../src/ops/log.js';
import type { Sample } from '../../../src/device/poller.js';
import { parseSimMap, startSimulation } from '../../../src/simulator/index.js';
import { createCommandServices, createSouthbound } from '../../../src/main.js';
import { waitFor } from '../../helpers/wait.js';

const VALUES = Array.from({ length: 40 }, (_, i) => i * 7 + 3);

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('commands plan with the learned read limits', () => {
  it('reads around a hole and corrects a refused push from the device', async () => {
    const map = parseSimMap(`units:
  1:
    holding: [{ start: 0, values: [${VALUES.join(', ')}] }]
    faults: { exception: { code: 2, table: holding, address: 27, count: 1 } }
`);
    if (!map.ok) throw new Error(map.problems.join('; '));
    const sim = await startSimulation({ map: map.map, logger: silentLogger(), tcp: { host: '127.0.0.1', port: 0 } });
    cleanups.push(() => sim.close());
    const stateDir = mkdtempSync(join(tmpdir(), 'fieldgate-cmd-plan-'));
    cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));
    const checked = checkConfig({
      gateway: { stateDir },
      buses: [{ name: 'plc', kind: 'tcp', host: '127.0.0.1', port: sim.tcp!.port, timeoutMs: 1000 }],
      devices: [{
        name: 'd', bus: 'plc', unitId: 1, pollIntervalMs: 200, limits: { maxGap: 8 },
        points: [
          { id: 'r25', table: 'holding', address: 25 },
          { id: 'r26', table: 'holding', address: 26, writable: true },
          { id: 'setpoint', table: 'holding', address: 28, writable: true, max: 40 },
          { id: 'r29', table: 'holding', address: 29 },
        ],
      }],
    }, {});
    expect(checked.issues).toEqual([]);
    const { site, compiled } = checked.config!;
    const samples: Sample[] = [];
    const southbound = createSouthbound(site, compiled, { onSample: (s) => samples.push(s), onDeviceState: () => {} }, silentLogger());
    cleanups.push(() => southbound.stop());
    const commands = createCommandServices(compiled, southbound, silentLogger());
    southbound.start();
    const poller = southbound.pollers.get('plc')!;
    await waitFor(() => poller.stats()[0]!.learned.length > 0 && samples.length >= 2, { what: 'the split learned', timeoutMs: 15_000 });
    expect(poller.stats()[0]!.learned).toEqual([expect.objectContaining({ kind: 'split', address: 28 })]);
    const svc = commands.get('d')!;
    const bus = southbound.buses.get('plc')!;
    const exceptionsBefore = bus.stats().exceptions;

    expect(await svc.runCommand('read', { keys: ['r26', 'setpoint', 'r25', 'r29'] })).toEqual({
      ok: true, result: { r25: VALUES[25], r26: VALUES[26], setpoint: VALUES[28], r29: VALUES[29] },
    });

    const pushed = await svc.applyAttributes({ r26: 1234, setpoint: 99 }, 'push');
    expect({ ...pushed.applied }).toEqual({ r26: 1234 });
    expect(Object.keys(pushed.rejected)).toEqual(['setpoint']);
    expect({ ...pushed.failed }).toEqual({});
    expect({ ...pushed.corrected }).toEqual({ setpoint: VALUES[28] });
    // Neither the read nor the read-back sent a request the device refuses.
    expect(bus.stats().exceptions).toBe(exceptionsBefore);
  });
});
