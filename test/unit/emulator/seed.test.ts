import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseSeed } from '../../../packages/emulator/src/state/seed.js';
import { seedProblems } from './seed-problems.js';
import { parseDuration } from '../../../packages/emulator/src/state/seed-reader.js';

const NOW = Date.UTC(2026, 0, 1);
const sample = readFileSync(new URL('../../../config/emulator-seed.yaml', import.meta.url), 'utf8');

const problems = (text: string): string[] => seedProblems(text, NOW);

describe('parseSeed', () => {
  it('reads the sample seed the demo uses', () => {
    const seed = parseSeed(sample, NOW);
    expect(seed.project.project_key).toBe('demo-project-key');
    expect(seed.apiApps).toEqual([{ app_id: 'demo-app', access_key: 'demo-access-key', secret_key: 'demo-secret-key' }]);
    const meter = seed.types.find((t) => t.name === 'modbus-meter')!;
    expect(meter).toMatchObject({ allow_auto_create: true, type_key: 'modbus-meter-type-key' });
    expect(meter.data_streams).toContainEqual({ identifier: 'serial_raw', name: 'Raw serial passthrough', type: 'hex' });
    expect(seed.devices.map((d) => d.access_token)).toEqual(['demo-meter-1-token', 'demo-meter-2-token', 'demo-meter-3-token', 'demo-gateway-token', 'demo-meter-4-token']);
    // Fixed app-side login and topics, so the docs' sample command lines work as printed.
    expect(seed.project).toMatchObject({ view_key: 'demo-view-key', view_secret: 'demo-view-secret' });
    expect(seed.devices.map((d) => d.view_token)).toEqual(['demo-meter-1-view', 'demo-meter-2-view', 'demo-meter-3-view', 'demo-gateway-view', 'demo-meter-4-view']);
    expect(seed.groups.map((g) => [g.id, g.parent])).toEqual([['grp-plant', undefined], ['grp-hall-a', 'grp-plant'], ['grp-hall-b', 'grp-plant']]);
  });

  it('turns `ago` into times and history into current values', () => {
    const d = parseSeed(sample, NOW).devices[0];
    expect(d.history.map((h) => h.ts)).toEqual([NOW - 3 * 3_600_000, NOW - 2 * 3_600_000, NOW - 2 * 3_600_000, NOW - 3_600_000]);
    expect(d.attributes.get('voltage')).toEqual({ value: 231, attr_type: 'report', ts: NOW - 3_600_000 });
    expect(d.attributes.get('setpoint')?.attr_type).toBe('push');
    expect(d.standard_infos).toEqual({ location: { lat: 48.137, lng: 11.575 } });
  });

  it.each([
    ['not YAML', 'a: [', 'not valid YAML'],
    ['missing project', 'device_types: [{ id: t, name: t }]', 'project: must be a mapping'],
    ['no types', 'project: { id: p, name: P, project_key: k }', 'device_types: at least one device type is required'],
    ['bad stream type', 'project: { id: p, name: P, project_key: k }\ndevice_types: [{ id: t, name: t, data_streams: [{ identifier: s, type: bin }] }]', 'device_types[0].data_streams[0].type: must be one of hex, text, json'],
    ['duplicate device key', 'project: { id: p, name: P, project_key: k }\ndevice_types: [{ id: t, name: t }]\ndevices: [{ id: a, name: A, type: t, device_key: k }, { id: b, name: B, type: t, device_key: k }]', 'devices[].device_key: duplicate value "k"'],
    ['unknown group', 'project: { id: p, name: P, project_key: k }\ndevice_types: [{ id: t, name: t }]\ndevices: [{ id: a, name: A, type: t, device_key: k, groups: [g] }]', 'devices[0].groups: unknown group "g"'],
    ['bad ago', 'project: { id: p, name: P, project_key: k }\ndevice_types: [{ id: t, name: t }]\ndevices: [{ id: a, name: A, type: t, device_key: k, history: [{ name: x, value: 1, ago: soon }] }]', 'devices[0].history[0].ago: must be a duration'],
    ['unknown role', 'project: { id: p, name: P, project_key: k }\ndevice_types: [{ id: t, name: t }]\ncustomers: [{ id: c, account: c, password: p, name: C, roles: [r] }]', 'customers[0].roles: unknown role "r"'],
  ])('reports %s with its path', (_n, text, expected) => {
    expect(problems(text).join('\n')).toContain(expected);
  });

  it('lists every problem at once', () => {
    const list = problems('project: { id: p }\ndevice_types: [{ id: t }]\napi_apps: [{ app_id: a }]');
    expect(list).toEqual(expect.arrayContaining([
      'project.name: is required', 'project.project_key: is required', 'device_types[0].name: is required',
      'api_apps[0].access_key: is required', 'api_apps[0].secret_key: is required',
    ]));
  });

  it.each([['90s', 90_000], ['15m', 900_000], ['2h', 7_200_000], ['3d', 259_200_000], ['1.5h', 5_400_000], ['2w', undefined], ['h', undefined]])(
    'parseDuration(%s)', (text, ms) => expect(parseDuration(text)).toBe(ms),
  );
});
