// Keeps the gateway-mode bench working: a tiny site in both modes, figures checked for sanity only,
// never speed. The daemon runs from source here (the bench runs the built CLI as the unit does).
import { describe, expect, it } from 'vitest';
import { measureGatewayModes, measureMode } from '../../bench/gateway.js';
import { TSX_FROM_SOURCE } from '../../helpers/child.js';

const SOURCE = [...TSX_FROM_SOURCE, 'test/system/fixtures/cli.ts'];

describe('gateway bench', () => {
  it('measures RSS, points, messages and CPU of the daemon in both modes', async () => {
    const devices = 3;
    const points = 5;
    const r = await measureGatewayModes({ devices, points, warmupS: 1, measureS: 4, entry: SOURCE, reload: true });
    for (const m of [r.direct, r.gateway]) {
      expect(m.rssMaxMb, m.mode).toBeGreaterThan(10);
      expect(m.rssMaxMb).toBeGreaterThanOrEqual(m.rssMeanMb);
      expect(m.rssPeakMb).toBeGreaterThanOrEqual(m.rssMaxMb);
      expect(m.rssAnonMb + m.rssFileMb, m.mode).toBeGreaterThan(10);
      expect(m.rssAnonMb).toBeGreaterThan(0);
      expect(m.pointsPerS, m.mode).toBeGreaterThan(0);
      expect(m.messagesPerS, m.mode).toBeGreaterThan(0);
      expect(m.bytesPerS).toBeGreaterThan(m.messagesPerS);
      expect(m.cpuSPer1000Points, m.mode).toBeGreaterThan(0);
      expect(m.devicesReporting, m.mode).toBe(devices);
    }
    // Counted on the wire: a direct device's report is one PUBLISH, a gateway batch carries several.
    expect(r.direct.messagesPerS * points).toBeGreaterThanOrEqual(r.direct.pointsPerS * 0.5);
    expect(r.load).toHaveLength(2);
    // The reload's peak is measured from a reset VmHWM: never above the start-up peak's order, never 0.
    expect(r.gateway.reloadPeakMb).toBeGreaterThan(10);
    expect(r.gateway.reloadS).toBeGreaterThan(0);
    expect(r.direct.reloadPeakMb).toBeUndefined();
  }, 120_000);

  it('fails loudly when the cloud refuses the reports (a seed that binds other addresses than the site sets)', async () => {
    const run = measureMode('gateway', { devices: 2, points: 2, warmupS: 1, measureS: 2, entry: SOURCE, bindAt: (i) => `elsewhere-${i}` });
    await expect(run).rejects.toThrow(/gateway bench \(gateway, 2 devices\): the cloud refused reports .*\n.*not bound to this gateway/);
  }, 120_000);
});
