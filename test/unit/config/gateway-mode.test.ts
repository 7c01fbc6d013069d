// Gateway mode in the site file: which devices go through fieldgate's identity, their sub-device
// addresses (defaults and overrides), and the identity block's normalisation.
import { describe, expect, it } from 'vitest';
import { checkConfig } from '../../../src/ops/site-file.js';
import { subDevicesOf } from '../../../src/core/config/gateway-mode.js';
import { validateGateway } from '../../../src/core/config/schema.js';

const POINTS = [{ id: 'v', table: 'input', address: 0 }];
const BUSES = [{ name: 'a', kind: 'tcp', host: '127.0.0.1' }, { name: 'b', kind: 'tcp', host: '127.0.0.1', port: 503 }];
const IDENTITY = { accessToken: 'gw-token' };

type RawDevice = { bus: string; unitId: number; cloud?: Record<string, unknown> };

function site(mode: string | undefined, devices: RawDevice[]) {
  const cloud = { mqttUrl: 'mqtt://127.0.0.1:1883', projectKey: 'pk', identity: IDENTITY, ...(mode ? { mode } : {}) };
  const raw = { gateway: { cloud }, buses: BUSES, devices: devices.map((d, i) => ({ name: `d${i}`, points: POINTS, ...d })) };
  const checked = checkConfig(raw, {});
  expect(checked.issues).toEqual([]);
  const config = checked.config!;
  return subDevicesOf(config.site, config.gateway.cloud).map((s) => [s.device.name, s.address]);
}

const token = (extra: Record<string, unknown> = {}) => ({ accessToken: 'tok', ...extra });

describe('sub-devices and their addresses', () => {
  it.each<[string, string | undefined, RawDevice[], string[][]]>([
    ['direct by default: no sub-device', undefined, [{ bus: 'a', unitId: 4, cloud: token() }], []],
    ['site-wide gateway mode, one bus: bus/unit all the same', 'gateway', [{ bus: 'a', unitId: 4, cloud: token() }, { bus: 'a', unitId: 5, cloud: token() }], [['d0', 'a/4'], ['d1', 'a/5']]],
    ['two buses: bus/unit (unit ids repeat across buses)', 'gateway', [{ bus: 'a', unitId: 4, cloud: token() }, { bus: 'b', unitId: 4, cloud: token() }], [['d0', 'a/4'], ['d1', 'b/4']]],
    ['a device without a cloud block is never a sub-device', 'gateway', [{ bus: 'a', unitId: 4 }, { bus: 'b', unitId: 4, cloud: token() }], [['d1', 'b/4']]],
    ['per-device override into gateway mode (mixed site)', undefined, [{ bus: 'a', unitId: 4, cloud: token({ mode: 'gateway' }) }, { bus: 'b', unitId: 4, cloud: token() }], [['d0', 'a/4']]],
    ['per-device override out of gateway mode', 'gateway', [{ bus: 'a', unitId: 4, cloud: token({ mode: 'direct' }) }, { bus: 'b', unitId: 4, cloud: token() }], [['d1', 'b/4']]],
    ['explicit address wins', 'gateway', [{ bus: 'a', unitId: 4, cloud: token({ subDeviceAddress: 'meter-north' }) }], [['d0', 'meter-north']]],
    ['an explicit address frees the default one', 'gateway', [{ bus: 'a', unitId: 4, cloud: token({ subDeviceAddress: 'a/5' }) }, { bus: 'a', unitId: 5, cloud: token({ subDeviceAddress: 'a/4' }) }], [['d0', 'a/5'], ['d1', 'a/4']]],
  ])('%s', (_name, mode, devices, expected) => {
    expect(site(mode, devices)).toEqual(expected);
  });
});

describe('gateway.cloud.identity', () => {
  it.each<[Record<string, unknown> | undefined, Record<string, unknown> | undefined]>([
    [undefined, undefined],
    [{}, undefined],
    [{ allowCreate: false }, undefined],
    [{ accessToken: 'gw' }, { accessToken: 'gw', allowCreate: false }],
    [{ deviceKey: 'fieldgate-1', typeKey: 't', allowCreate: true }, { deviceKey: 'fieldgate-1', typeKey: 't', allowCreate: true }],
  ])('%j normalises to %j', (identity, expected) => {
    const result = validateGateway({ cloud: identity === undefined ? {} : { identity } }, {});
    expect(result.issues).toEqual([]);
    // toMatchObject: the identity block also carries its report and command bounds (self-identity.test.ts).
    if (expected === undefined) expect(result.gateway?.cloud.identity).toBeUndefined();
    else expect(result.gateway?.cloud.identity).toMatchObject(expected);
  });

  it('takes the access token from the environment', () => {
    const result = validateGateway({ cloud: {} }, { FIELDGATE_IDENTITY_ACCESS_TOKEN: 'from-env' });
    expect(result.gateway?.cloud.identity).toMatchObject({ accessToken: 'from-env', allowCreate: false });
  });

  it('is enough on its own: a site of direct devices may still have an identity', () => {
    const raw = { gateway: { cloud: { mqttUrl: 'mqtt://127.0.0.1:1883', projectKey: 'pk', identity: IDENTITY } }, buses: BUSES, devices: [{ name: 'd', bus: 'a', unitId: 1, points: POINTS, cloud: token() }] };
    expect(checkConfig(raw, {}).issues).toEqual([]);
  });
});
