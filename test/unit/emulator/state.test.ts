import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../helpers/manual-clock.js';
import { ApiError } from '../../../packages/emulator/src/http/errors.js';
import { parseSeed } from '../../../packages/emulator/src/state/seed.js';
import { EmulatorState, HISTORY_CAP } from '../../../packages/emulator/src/state/state.js';

const NOW = Date.UTC(2026, 0, 1);
const sample = readFileSync(new URL('../../../config/emulator-seed.yaml', import.meta.url), 'utf8');
const fresh = () => new EmulatorState(parseSeed(sample, NOW), new ManualClock(NOW));

function alarm(id: string, status: number, level: number, t: number, rule = 'r1') {
  return { id, device_id: 'dev-meter-1', alarm_status: status, alarm_level: level, alarm_info: { rule_id: rule }, create_time: t, notify_logs: [] };
}

describe('EmulatorState', () => {
  it.each([
    ['no logs', [], 0],
    ['one raised', [alarm('a', 1, 3, 1)], 3],
    ['raised then recovered', [alarm('a', 1, 3, 1), alarm('b', 0, 3, 2)], 0],
    ['two rules, one recovered', [alarm('a', 1, 3, 1), alarm('b', 0, 3, 2), alarm('c', 1, 1, 3, 'r2')], 1],
    ['highest of open rules', [alarm('a', 1, 2, 1), alarm('c', 1, 1, 3, 'r2')], 2],
  ])('alarm level with %s', (_n, logs, level) => {
    const state = fresh();
    state.alarms.push(...logs);
    expect(state.alarmState('dev-meter-1')).toEqual({ alarm_level: level, alarm_status: level > 0 ? 1 : 0 });
  });

  it('expands groups with and without sub-groups; [] selects ungrouped devices', () => {
    const state = fresh();
    expect([...state.expandGroups(['grp-plant'], false)]).toEqual(['grp-plant']);
    expect([...state.expandGroups(['grp-plant'], true)]).toEqual(['grp-plant', 'grp-hall-a', 'grp-hall-b']);
    expect(state.devicesInGroups([], false)).toEqual([]);
    expect(state.devicesInGroups(undefined, false)).toHaveLength(5);
  });

  it('creates devices with fresh credentials and refuses taken keys', () => {
    const state = fresh();
    const d = state.createDevice({ name: 'x' });
    expect(d).toMatchObject({ type: 'type-modbus-meter', device_key: d.id, groups: [] });
    expect(d.access_token).toMatch(/^[0-9a-f]{32}$/);
    expect(state.deviceByToken(d.access_token)).toBe(d);
    expect(() => state.createDevice({ name: 'y', device_key: 'meter-1' })).toThrow(ApiError);
  });

  it('deletes a device from customers and alarm logs', () => {
    const state = fresh();
    state.deleteDevice('dev-meter-2');
    expect(state.customers.get('cus-acme')!.devices).toEqual(['dev-meter-1']);
    expect(state.alarms).toEqual([]);
  });

  it(`keeps at most ${HISTORY_CAP} history points per device, dropping the oldest`, () => {
    const state = fresh();
    const device = state.requireDevice('dev-meter-3');
    device.history.length = 0;
    for (let i = 0; i <= HISTORY_CAP; i += 1) state.setAttributes(device, { n: i }, 'report');
    expect(device.history).toHaveLength(HISTORY_CAP);
    expect(device.history[0].value).toBe(1);
    expect(device.history.at(-1)!.value).toBe(HISTORY_CAP);
  });
});
