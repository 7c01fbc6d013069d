// fieldgate_build_info: the build that runs, by the version the status carries (scripts/package.sh
// stamps base version, commit count and short hash into the built code), so a fleet's scrape
// tells two builds apart.
import { describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../../src/ops/metrics.js';
import type { GatewayStatus } from '../../src/ops/status.js';

const status = (version: string): GatewayStatus => ({ version, startedAt: '', uptimeS: 0, buses: [], devices: [], links: [], outbox: null, rateQueue: null });

describe('build info metric', () => {
  it('names the running version in its label, value 1', async () => {
    const text = await createMetricsRegistry(() => status('0.1.0+812.g6b0928b00')).metrics();
    expect(text).toMatch(/^fieldgate_build_info\{version="0\.1\.0\+812\.g6b0928b00"\} 1$/m);
  });

  it('a dirty build says so; one series per scrape, never the previous build\'s', async () => {
    let version = '0.1.0+812.g6b0928b00';
    const registry = createMetricsRegistry(() => status(version));
    await registry.metrics();
    version = '0.1.0+813.g1234abcd0.dirty';
    const text = await registry.metrics();
    const series = text.split('\n').filter((l) => l.startsWith('fieldgate_build_info{'));
    expect(series).toEqual(['fieldgate_build_info{version="0.1.0+813.g1234abcd0.dirty"} 1']);
  });
});
