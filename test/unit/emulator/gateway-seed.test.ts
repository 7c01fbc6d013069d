// Seed rules for gateway and sub-device types and the bindings between them.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseSeed } from '../../../packages/emulator/src/state/seed.js';
import { seedProblems } from './seed-problems.js';

const NOW = Date.UTC(2026, 0, 1);
const gatewaySeed = readFileSync(new URL('../../integration/emulator/fixtures/gateway-seed.yaml', import.meta.url), 'utf8');
const sample = readFileSync(new URL('../../../config/emulator-seed.yaml', import.meta.url), 'utf8');

function seedWith(types: string, devices: string): string {
  return `project: { id: p, name: P, project_key: k }\ndevice_types:\n${types}\ndevices:\n${devices}\n`;
}

const TYPES = [
  '  - { id: t-direct, name: direct }',
  '  - { id: t-gw, name: gw, kind: gateway }',
  '  - { id: t-sub, name: sub, kind: sub_device }',
].join('\n');

const problems = (text: string): string[] => seedProblems(text, NOW);

describe('gateway seed', () => {
  it('reads kinds, conn_type and bindings', () => {
    const seed = parseSeed(gatewaySeed, NOW);
    expect(seed.types.map((t) => [t.id, t.kind, t.conn_type])).toEqual([
      ['type-meter', 'direct', '1'], ['type-sub-meter', 'sub_device', '1'], ['type-gateway', 'gateway', '3'],
    ]);
    expect(seed.devices.map((d) => [d.id, d.binding])).toEqual([
      ['dev-gw-1', undefined], ['dev-gw-2', undefined],
      ['dev-sub-1', { gateway: 'dev-gw-1', addr: '1' }], ['dev-sub-2', { gateway: 'dev-gw-1', addr: '2' }],
      ['dev-sub-3', { gateway: 'dev-gw-2', addr: '1' }], ['dev-sub-free', undefined], ['dev-direct', undefined],
    ]);
  });

  it('keeps the demo meters direct and binds the demo sub-device to the demo gateway', () => {
    const seed = parseSeed(sample, NOW);
    expect(seed.types.map((t) => [t.id, t.kind, t.conn_type])).toEqual([
      ['type-modbus-meter', 'direct', '1'], ['type-gateway', 'gateway', '3'], ['type-modbus-sub-meter', 'sub_device', '1'],
    ]);
    expect(seed.devices.map((d) => [d.id, d.binding])).toEqual([
      ['dev-meter-1', undefined], ['dev-meter-2', undefined], ['dev-meter-3', undefined],
      ['dev-fieldgate', undefined], ['dev-meter-4', { gateway: 'dev-fieldgate', addr: '4' }],
    ]);
  });

  it('makes a type a gateway from conn_type "3" alone', () => {
    const seed = parseSeed(seedWith('  - { id: t, name: t, conn_type: "3" }', '  - { id: g, name: g, type: t, device_key: g }'), NOW);
    expect(seed.types[0]).toMatchObject({ kind: 'gateway', conn_type: '3' });
  });

  it('takes a numeric address as its text', () => {
    const seed = parseSeed(seedWith(TYPES, '  - { id: g, name: g, type: t-gw, device_key: g }\n  - { id: s, name: s, type: t-sub, device_key: s, gateway: g, sub_device_addr: 17 }'), NOW);
    expect(seed.devices[1].binding).toEqual({ gateway: 'g', addr: '17' });
  });

  it.each([
    ['an unknown kind', '  - { id: t, name: t, kind: hub }', '  - { id: d, name: d, type: t, device_key: d }', ['device_types[0].kind: must be one of direct, gateway, sub_device']],
    ['a gateway kind with another conn_type', '  - { id: t, name: t, kind: gateway, conn_type: "1" }', '  - { id: d, name: d, type: t, device_key: d }', ['device_types[0].conn_type: must be "3" exactly when kind is gateway']],
    ['conn_type "3" on a sub-device kind', '  - { id: t, name: t, kind: sub_device, conn_type: "3" }', '  - { id: d, name: d, type: t, device_key: d }', ['device_types[0].conn_type: must be "3" exactly when kind is gateway']],
    ['an address without a gateway', TYPES, '  - { id: s, name: s, type: t-sub, device_key: s, sub_device_addr: "1" }', ['devices[0].gateway: is required with sub_device_addr (the gateway device id)']],
    ['a gateway without an address', TYPES, '  - { id: g, name: g, type: t-gw, device_key: g }\n  - { id: s, name: s, type: t-sub, device_key: s, gateway: g }', ['devices[1].sub_device_addr: is required with gateway (a non-empty string)']],
    ['an empty address', TYPES, '  - { id: g, name: g, type: t-gw, device_key: g }\n  - { id: s, name: s, type: t-sub, device_key: s, gateway: g, sub_device_addr: "" }', ['devices[1].sub_device_addr: is required with gateway (a non-empty string)']],
    ['an unknown gateway', TYPES, '  - { id: s, name: s, type: t-sub, device_key: s, gateway: nope, sub_device_addr: "1" }', ['devices[0].gateway: unknown device "nope"']],
    ['a gateway that is not of a gateway type', TYPES, '  - { id: g, name: g, type: t-direct, device_key: g }\n  - { id: s, name: s, type: t-sub, device_key: s, gateway: g, sub_device_addr: "1" }', ['devices[1].gateway: device "g" is not of a gateway type']],
    ['a bound device that is not a sub-device', TYPES, '  - { id: g, name: g, type: t-gw, device_key: g }\n  - { id: s, name: s, type: t-direct, device_key: s, gateway: g, sub_device_addr: "1" }', ['devices[1].gateway: only a device whose type is of kind sub_device can be bound to a gateway']],
    ['an address taken twice on one gateway', TYPES, '  - { id: g, name: g, type: t-gw, device_key: g }\n  - { id: s1, name: s, type: t-sub, device_key: s1, gateway: g, sub_device_addr: "1" }\n  - { id: s2, name: s, type: t-sub, device_key: s2, gateway: g, sub_device_addr: "1" }', ['devices[2].sub_device_addr: "1" is already used by s1 on gateway "g"']],
  ])('refuses %s', (_name, types, devices, expected) => {
    expect(problems(seedWith(types, devices))).toEqual(expected);
  });

  it('allows the same address on two gateways', () => {
    expect(problems(seedWith(TYPES, [
      '  - { id: g1, name: g, type: t-gw, device_key: g1 }', '  - { id: g2, name: g, type: t-gw, device_key: g2 }',
      '  - { id: s1, name: s, type: t-sub, device_key: s1, gateway: g1, sub_device_addr: "1" }',
      '  - { id: s2, name: s, type: t-sub, device_key: s2, gateway: g2, sub_device_addr: "1" }',
    ].join('\n')))).toEqual([]);
  });
});
