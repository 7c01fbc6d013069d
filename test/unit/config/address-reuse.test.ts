// An address the cloud bound to one device never passes silently to another (pure): a renamed or
// replaced device taking an old address by default is refused, naming both devices and the address;
// written out, it is a re-assignment.
import { describe, expect, it } from 'vitest';
import { addressHolders, checkAddressReuse } from '../../../src/core/config/address-reuse.js';
import type { Config } from '../../../src/core/config/config.js';
import { formatIssue } from '../../../src/core/config/issues.js';
import { releasedAfter } from '../../../src/ops/sub-device-record.js';
import { checkConfig } from '../../../src/ops/site-file.js';

type RawDevice = { name: string; bus?: string; unitId: number; cloud?: Record<string, unknown> };

function config(devices: RawDevice[]): Config {
  const raw = {
    gateway: { cloud: { mqttUrl: 'mqtt://127.0.0.1:1883', projectKey: 'pk', identity: { accessToken: 'gw' }, mode: 'gateway' } },
    buses: [{ name: 'a', kind: 'tcp', host: '127.0.0.1', port: 5020 }],
    devices: devices.map((d) => ({ points: [{ id: 'v', table: 'input', address: 0 }], bus: 'a', ...d, cloud: { accessToken: `tok-${d.name}`, ...d.cloud } })),
  };
  const checked = checkConfig(raw, {});
  if (!checked.config) throw new Error(checked.issues.map(formatIssue).join('; '));
  return checked.config;
}

const RELEASED = new Map([['a/1', { device: 'pump-old', lastUsedAt: '2026-11-01T10:00:00.000Z' }]]);

describe('an address another device was announced under', () => {
  const cases: Array<{ name: string; devices: RawDevice[]; announced: Array<[string, string]>; released?: typeof RELEASED; refused: string[]; reassigned?: Array<[string, string, string]> }> = [
    { name: 'a renamed device on the old unit (removed device released the address)', devices: [{ name: 'pump-new', unitId: 1 }], announced: [], released: RELEASED, refused: ['pump-new'] },
    { name: 'a rename within one reload (the old device still announced)', devices: [{ name: 'pump-new', unitId: 1 }], announced: [['pump-old', 'a/1']], refused: ['pump-new'] },
    { name: 'the same device back on its address', devices: [{ name: 'pump-old', unitId: 1 }], announced: [], released: RELEASED, refused: [] },
    { name: 'a new device on an address nobody used', devices: [{ name: 'pump-new', unitId: 2 }], announced: [], released: RELEASED, refused: [] },
    {
      name: 'the address written out: a re-assignment', devices: [{ name: 'pump-new', unitId: 1, cloud: { subDeviceAddress: 'a/1' } }], announced: [], released: RELEASED,
      refused: [], reassigned: [['pump-new', 'a/1', 'pump-old']],
    },
    {
      name: 'the holder moved to another address explicitly: its old one stays its', devices: [{ name: 'x', unitId: 9, cloud: { subDeviceAddress: 'meter-x' } }, { name: 'y', unitId: 1 }],
      announced: [['x', 'a/1']], refused: ['y'],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const result = checkAddressReuse(config(c.devices), addressHolders(new Map(c.announced), c.released ?? new Map()));
      expect(result.issues.map((i) => i.message.match(/\(([^)]+)\)/)?.[1])).toEqual(c.refused);
      expect(result.reassigned.map((r) => [r.device, r.address, r.from])).toEqual(c.reassigned ?? []);
    });
  }

  it('the refusal names both devices, the address and when it was last used', () => {
    const [issue] = checkAddressReuse(config([{ name: 'pump-new', unitId: 1 }]), addressHolders(new Map(), RELEASED)).issues;
    expect(issue.path).toBe('devices[0].cloud');
    expect(issue.message).toContain('devices[0] (pump-new) would take the sub-device address "a/1" that device "pump-old" was announced under');
    expect(issue.message).toContain('last used 2026-11-01T10:00:00.000Z');
    expect(issue.message).toContain('write cloud.subDeviceAddress: "a/1" out');
  });
});

describe('released addresses across record writes', () => {
  it('an address left behind is kept with its device and time; taken again, it leaves the released ones', () => {
    const at = '2026-11-27T02:00:00.000Z';
    const released = releasedAfter(new Map([['x', 'a/1'], ['y', 'a/2']]), new Map([['y', 'a/2']]), new Map(), at);
    expect([...released]).toEqual([['a/1', { device: 'x', lastUsedAt: at }]]);
    expect([...releasedAfter(new Map([['y', 'a/2']]), new Map([['y', 'a/2'], ['z', 'a/1']]), released, 'later')]).toEqual([]);
    expect([...releasedAfter(new Map(), new Map(), released, 'later')]).toEqual([...released]);
  });
});
