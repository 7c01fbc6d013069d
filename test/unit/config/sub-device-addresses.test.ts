// Sub-device addresses kept across restarts, upgrades and reloads (pure): a device keeps the address
// it was announced under until the site file writes another out; a clash names both devices and
// both addresses.
import { describe, expect, it } from 'vitest';
import type { Config } from '../../../src/core/config/config.js';
import { legacySubDeviceAddresses } from '../../../src/core/config/gateway-mode.js';
import { keepRunningAddresses, pinSubDeviceAddresses, subDeviceAddressesOf } from '../../../src/core/config/sub-device-addresses.js';
import { formatIssue } from '../../../src/core/config/issues.js';
import { checkConfig } from '../../../src/ops/site-file.js';

type RawDevice = { name: string; bus: string; unitId: number; cloud?: Record<string, unknown> };

function config(devices: RawDevice[], buses = ['a']): Config {
  const raw = {
    gateway: { cloud: { mqttUrl: 'mqtt://127.0.0.1:1883', projectKey: 'pk', identity: { accessToken: 'gw' }, mode: 'gateway' } },
    buses: buses.map((name, i) => ({ name, kind: 'tcp', host: '127.0.0.1', port: 5020 + i })),
    devices: devices.map((d) => ({ points: [{ id: 'v', table: 'input', address: 0 }], ...d, cloud: { accessToken: `tok-${d.name}`, ...d.cloud } })),
  };
  const checked = checkConfig(raw, {});
  if (!checked.config) throw new Error(checked.issues.map(formatIssue).join('; '));
  return checked.config;
}

const ONE_BUS = [{ name: 'x', bus: 'a', unitId: 1 }, { name: 'y', bus: 'a', unitId: 2 }];
const TWO_BUSES = [...ONE_BUS, { name: 'z', bus: 'b', unitId: 1 }];

describe('sub-device addresses across restarts and reloads', () => {
  it('a state directory of a version before the record: that version\'s rule, bare unit ids on one bus', () => {
    const site = config(ONE_BUS);
    expect([...legacySubDeviceAddresses(site.site, site.gateway.cloud)]).toEqual([['x', '1'], ['y', '2']]);
  });

  it('a second bus: every announced device keeps its address, the new one takes <bus>/<unit>', () => {
    const pinned = pinSubDeviceAddresses(config(TWO_BUSES, ['a', 'b']), new Map([['x', '1'], ['y', '2']]));
    expect(pinned.issues).toEqual([]);
    expect([...subDeviceAddressesOf(pinned.config!)]).toEqual([['x', '1'], ['y', '2'], ['z', 'b/1']]);
  });

  it('a device moved to another unit keeps its address; an explicit address replaces it and is reported as a change', () => {
    const moved = config([{ name: 'x', bus: 'a', unitId: 7 }, { name: 'y', bus: 'a', unitId: 2, cloud: { subDeviceAddress: 'meter-y' } }]);
    const pinned = pinSubDeviceAddresses(moved, new Map([['x', 'a/1'], ['y', 'a/2']]));
    expect([...subDeviceAddressesOf(pinned.config!)]).toEqual([['x', 'a/1'], ['y', 'meter-y']]);
    expect(pinned.changed).toEqual([{ device: 'y', from: 'a/2', to: 'meter-y' }]);
  });

  it('removing an explicit address at a reload does not move the device', () => {
    const running = config([{ name: 'x', bus: 'a', unitId: 1, cloud: { subDeviceAddress: 'meter-x' } }]);
    const next = keepRunningAddresses(config([{ name: 'x', bus: 'a', unitId: 1 }]), running);
    expect([...subDeviceAddressesOf(next.config!)]).toEqual([['x', 'meter-x']]);
  });

  it('an address another device takes explicitly is refused, naming both devices and both addresses', () => {
    const next = config([{ name: 'x', bus: 'a', unitId: 1 }, { name: 'y', bus: 'a', unitId: 2 }, { name: 'w', bus: 'b', unitId: 3, cloud: { subDeviceAddress: '1' } }], ['a', 'b']);
    const pinned = pinSubDeviceAddresses(next, new Map([['x', '1'], ['y', '2']]));
    expect(pinned.config).toBeUndefined();
    expect(pinned.issues.map(formatIssue)).toEqual([
      'devices[0].cloud: keeps the sub-device address "1" it was announced under (state directory) rather than move to "a/1" unasked, but devices[2] (w) sets it in cloud.subDeviceAddress: give one of them another cloud.subDeviceAddress',
      'devices[2].cloud.subDeviceAddress: sub-device address "1" is the one devices[0] (x) was announced under (state directory), which it keeps rather than move to "a/1" unasked: give one of them another cloud.subDeviceAddress',
    ]);
  });

  it('a new device whose default is an address a moved device keeps is refused', () => {
    const running = config([{ name: 'x', bus: 'a', unitId: 1 }]);
    const next = config([{ name: 'x', bus: 'a', unitId: 9 }, { name: 'n', bus: 'a', unitId: 1 }]);
    const kept = keepRunningAddresses(next, running);
    expect(kept.config).toBeUndefined();
    expect(kept.issues.map((i) => i.path)).toEqual(['devices[0].cloud', 'devices[1].cloud']);
    expect(kept.issues[1].message).toContain('"a/1" is the one devices[0] (x) was announced under');
    expect(kept.issues[0].message).toContain('devices[1] (n) has it by default');
  });

  it('devices that left the site are forgotten: nothing is kept for a name no longer there', () => {
    const pinned = pinSubDeviceAddresses(config([{ name: 'y', bus: 'a', unitId: 1 }]), new Map([['x', 'a/1']]));
    expect(pinned.issues).toEqual([]);
    expect(pinned.config!.site.announcedAddresses).toEqual({});
    expect([...subDeviceAddressesOf(pinned.config!)]).toEqual([['y', 'a/1']]);
  });
});
