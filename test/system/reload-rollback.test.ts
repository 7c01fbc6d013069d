// A reload that fails part-way through applying, against the emulator and the Modbus simulator:
// a failure is injected into the start of the third device (two were already switched to their
// new definitions); the reload is rolled back whole: the old definitions run again (old point
// map: a value only the new one allows is refused), the recorded config stays the old one, the
// kept link never dropped, and the outcome is `failed` with one error line.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DeviceConfig } from '../../src/core/config/site-types.js';
import { Reporter } from '../../src/device/reporter.js';
import { startGateway } from '../../src/main.js';
import { captureLog } from '../helpers/capture-log.js';
import { deviceApi, meterDevice, startSite, waitFor } from './harness.js';
import { countConnects, perTestSite } from './per-test-site.js';

const TOKEN = 'demo-meter-1-token';

function withSpeedMax(d: DeviceConfig, max: number): DeviceConfig {
  return { ...d, points: d.points.map((p) => (p.id === 'speed' ? { ...p, max } : p)) };
}

describe('reload failing part-way through applying', () => {
  afterEach(() => vi.restoreAllMocks());
  const held = perTestSite();

  it('is rolled back whole: old definitions polled and written again, old config recorded, the link kept, outcome failed', async () => {
    const s = await startSite();
    held.site = s;
    const connects = countConnects(s, 'dev-meter-1');
    const capture = captureLog();
    const meter1 = meterDevice('meter-1', 1, TOKEN, 200);
    const meter2: DeviceConfig = { ...meterDevice('meter-2', 2, 'unused', 200), cloud: undefined };
    const running = s.config([meter1, meter2]);
    const g = await startGateway(running, { logger: capture.log, env: {}, configSha256: 'sha-running' });
    held.gateway = g;
    await waitFor(() => (g.status().links[0]?.state === 'up' && g.status().devices.every((d) => d.online) ? true : undefined), 30_000);
    const connectsBefore = connects();

    // The third device to start fails (after meter-1 and meter-2 were switched to new definitions).
    const addDevice = Reporter.prototype.addDevice;
    vi.spyOn(Reporter.prototype, 'addDevice').mockImplementation(function (this: Reporter, d: DeviceConfig) {
      if (d.name === 'meter-3') throw new Error('injected: reporter refused meter-3');
      addDevice.call(this, d);
    });
    const next = s.config([withSpeedMax(meter1, 4000), { ...meter2, pollIntervalMs: 300 }, { ...meter2, name: 'meter-3' }]);
    const result = await g.reload(() => ({ config: next, sha256: 'sha-next', issues: [] }));
    vi.restoreAllMocks();

    expect(result).toMatchObject({ outcome: 'failed', generation: 1, problems: [{ path: 'reload', message: 'reload failed while applying, rolled back: injected: reporter refused meter-3' }] });
    const status = g.status();
    expect(status.config).toMatchObject({ generation: 1, sha256: 'sha-running', lastError: expect.stringContaining('rolled back'), reloads: { failed: 1, applied: 0 } });
    expect(status.devices.map((d) => d.name)).toEqual(['meter-1', 'meter-2']);
    expect(capture.messages('site file reload failed: rolled back, the running config is unchanged')).toEqual([expect.objectContaining({
      level: 50, generation: 1, sha256: 'sha-next', added: ['meter-3'], replaced: ['meter-1', 'meter-2'],
    })]);
    expect(capture.messages('site file reloaded')).toHaveLength(0);

    // Both old definitions poll again: a fresh value of each reaches the gateway.
    s.sim.simulator.setRegister(1, 'input', 0, 2399);
    s.sim.simulator.setRegister(2, 'holding', 0, 4321);
    await waitFor(() => (g.latestValues('meter-1').voltage === 239.9 && g.latestValues('meter-2').setpoint === 432.1 ? true : undefined));
    expect(g.latestValues('meter-3')).toEqual({});
    // meter-1 runs its old point map again: 3500 is above its old speed max (only the new one allowed it), 1234 is written.
    const refused = await deviceApi(s, TOKEN, 'POST', '/command/sync/send', { method: 'write', params: { speed: 3500 }, id: 7 });
    expect(refused).toMatchObject({ result: 1, command: { params: { error: { code: 422 } } } });
    const written = await deviceApi(s, TOKEN, 'POST', '/command/sync/send', { method: 'write', params: { speed: 1234 }, id: 8 });
    expect(written).toMatchObject({ result: 1, command: { params: { speed: 1234 } } });
    expect(s.sim.simulator.getRegister(1, 'holding', 1)).toBe(1234);
    // Its link was kept through the attempt and the rollback.
    expect(connects()).toBe(connectsBefore);
    expect(g.status().links).toEqual([expect.objectContaining({ device: 'meter-1', state: 'up', reconnects: 0 })]);

    // The same file again, now without the fault: applied whole.
    const again = await g.reload(() => ({ config: next, sha256: 'sha-next', issues: [] }));
    expect(again).toMatchObject({ outcome: 'applied', generation: 2 });
    expect(g.status().devices.map((d) => d.name)).toEqual(['meter-1', 'meter-2', 'meter-3']);
  }, 90_000);
});
