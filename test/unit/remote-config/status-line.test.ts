// `fieldgate status` says which site generation runs, from which file, why, and the last rollback.
import { describe, expect, it } from 'vitest';
import { formatStatus } from '../../../src/cli/status.js';
import type { ConfigStatus } from '../../../src/ops/status.js';

const config: ConfigStatus = { generation: 2, sha256: 'a'.repeat(64), loadedAt: '2026-12-02T00:00:00.000Z', lastError: null, reloads: { applied: 1, unchanged: 0, refused: 0, failed: 0 } };
const base = { version: '0.1.0', startedAt: '2026-12-02T00:00:00.000Z', uptimeS: 5, devices: [], links: [], rateQueue: null, outbox: null, buses: [] };

describe('status of the site generation', () => {
  it.each([
    ['confirmed', { generation: 4, state: 'confirmed' as const, file: '/var/lib/fieldgate/site/generation-4.yaml', reason: 'generation 4, the last confirmed (remote, 2026-12-01T10:00:00.000Z)', lastRollback: '' },
      ['site generation 4: /var/lib/fieldgate/site/generation-4.yaml (generation 4, the last confirmed'], ['last rollback']],
    ['awaiting, after a rollback', { generation: 6, state: 'awaiting_confirm' as const, file: '/s/generation-6.yaml', reason: 'generation 6, applied by site_apply', lastRollback: 'generation 5 rolled back to 4: not confirmed within 30 s' },
      ['site generation 6 AWAITING CONFIRMATION: /s/generation-6.yaml', 'last rollback: generation 5 rolled back to 4: not confirmed within 30 s'], []],
  ])('%s', (_what, site, shown, absent) => {
    const text = formatStatus({ ...base, config: { ...config, site } });
    for (const line of shown) expect(text).toContain(line);
    for (const line of absent) expect(text).not.toContain(line);
  });

  it('says nothing of generations without a store', () => {
    expect(formatStatus({ ...base, config })).not.toContain('site generation');
  });
});
