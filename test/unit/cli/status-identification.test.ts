// `fieldgate status`: devices whose model is in doubt are listed (another model, unverified); an
// identified device is not.
import { describe, expect, it } from 'vitest';
import { formatStatus } from '../../../src/cli/status.js';

describe('fieldgate status: identification', () => {
  it('lists another model and an unverified one, not an identified one', () => {
    const device = (name: string, identification: object) => ({ name, bus: 'line1', online: false, points: 2, lastPollAgeMs: null, skippedCycles: 0, identification });
    const text = formatStatus({
      version: '0.1.0', startedAt: '2026-11-22T00:00:00.000Z', uptimeS: 61, links: [], rateQueue: null, outbox: null,
      buses: [{ name: 'line1', kind: 'tcp', up: true, transactions: 10, timeouts: 0, exceptions: 0, queueDepth: 0, utilisation: 0.1 }],
      devices: [
        device('ok', { state: 'identified', profiles: ['acme-pm1'] }),
        device('wrong', { state: 'other-model', profiles: ['acme-pm1'], identifiedAs: ['acme-pm2'], detail: 'model code is 200, the profile\'s model shows 100' }),
        device('unknown', { state: 'other-model', profiles: ['acme-pm1'], identifiedAs: [], detail: 'model code is 7, the profile\'s model shows 100' }),
        device('quiet', { state: 'unverified', profiles: ['acme-pm1'], detail: 'model code: refused (Illegal data address)' }),
      ] as never,
    });
    const table = text.slice(text.indexOf('DEVICE   PROFILE'));
    expect(table.split('\n').slice(0, 4)).toEqual([
      'DEVICE   PROFILE   IDENTIFIES AS           DETAIL',
      'wrong    acme-pm1  OTHER MODEL (acme-pm2)  model code is 200, the profile\'s model shows 100',
      'unknown  acme-pm1  OTHER MODEL             model code is 7, the profile\'s model shows 100',
      'quiet    acme-pm1  unverified              model code: refused (Illegal data address)',
    ]);
    expect(table).not.toMatch(/^ok /m);
  });
});
