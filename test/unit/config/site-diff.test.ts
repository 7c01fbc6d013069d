// planReload (pure), table-driven: which devices and buses a reload keeps, replaces, adds and
// removes, and which gateway-level changes refuse the whole file.
import { describe, expect, it } from 'vitest';
import type { Config } from '../../../src/core/config/config.js';
import { differingPaths, planReload, type ReloadPlan } from '../../../src/core/config/site-diff.js';
import { checkConfig } from '../../../src/ops/site-file.js';

type Raw = Record<string, unknown> & { gateway: Record<string, unknown>; buses: Array<Record<string, unknown>>; devices: Array<Record<string, unknown>> };

function meter(name: string, bus: string, unitId: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, bus, unitId, pollIntervalMs: 1000, points: [{ id: 'p', table: 'holding', address: 0, type: 'uint16' }], ...extra };
}

function baseSite(): Raw {
  return {
    gateway: {
      stateDir: '/tmp/fg-site-diff', logLevel: 'info', health: { enabled: false },
      cloud: { mqttUrl: 'mqtt://127.0.0.1:1883', projectKey: 'pk', identity: { accessToken: 'gw' } },
    },
    buses: [
      { name: 'a', kind: 'tcp', host: '127.0.0.1', port: 5020 },
      { name: 'b', kind: 'tcp', host: '127.0.0.1', port: 5021 },
    ],
    devices: [
      meter('m1', 'a', 1, { cloud: { accessToken: 't1' } }),
      meter('m2', 'a', 2, { cloud: { accessToken: 't2', mode: 'gateway', subDeviceAddress: 'x2' } }),
      meter('m3', 'b', 1),
    ],
  };
}

function config(raw: Raw): Config {
  const { config: loaded, issues } = checkConfig(raw, {});
  if (!loaded) throw new Error(issues.map((i) => `${i.path}: ${i.message}`).join('; '));
  return loaded;
}

const unchanged = { busesAdded: [], busesRemoved: [], busesRestarted: [], devicesAdded: [], devicesRemoved: [], devicesReplaced: [], devicesKeepingLink: [] };

const cases: Array<{ name: string; edit: (raw: Raw) => void; plan: Partial<ReloadPlan> }> = [
  { name: 'nothing changed', edit: () => undefined, plan: { ...unchanged, identical: true, devicesKept: ['m1', 'm2', 'm3'] } },
  { name: 'a point of one device: replaced, keeping its link', edit: (r) => { r.devices[0] = meter('m1', 'a', 1, { cloud: { accessToken: 't1' }, pollIntervalMs: 500 }); }, plan: { ...unchanged, identical: false, devicesReplaced: ['m1'], devicesKeepingLink: ['m1'], devicesKept: ['m2', 'm3'] } },
  { name: 'a gateway-mode device\'s point: it keeps its place on the identity\'s link', edit: (r) => { r.devices[1] = meter('m2', 'a', 2, { cloud: { accessToken: 't2', mode: 'gateway', subDeviceAddress: 'x2' }, pollIntervalMs: 500 }); }, plan: { ...unchanged, devicesReplaced: ['m2'], devicesKeepingLink: ['m2'], devicesKept: ['m1', 'm3'] } },
  { name: 'only the timestamp attribute: the link is kept', edit: (r) => { r.devices[0] = meter('m1', 'a', 1, { cloud: { accessToken: 't1', timestampAttribute: 'ts' } }); }, plan: { ...unchanged, devicesReplaced: ['m1'], devicesKeepingLink: ['m1'], devicesKept: ['m2', 'm3'] } },
  { name: 'another access token: a new link', edit: (r) => { r.devices[0] = meter('m1', 'a', 1, { cloud: { accessToken: 't1-new' } }); }, plan: { ...unchanged, devicesReplaced: ['m1'], devicesKept: ['m2', 'm3'] } },
  { name: 'another sub-device address: a new place', edit: (r) => { r.devices[1] = meter('m2', 'a', 2, { cloud: { accessToken: 't2', mode: 'gateway', subDeviceAddress: 'x9' } }); }, plan: { ...unchanged, devicesReplaced: ['m2'], devicesKept: ['m1', 'm3'] } },
  { name: 'direct to gateway mode: a new link', edit: (r) => { r.devices[0] = meter('m1', 'a', 1, { cloud: { accessToken: 't1', mode: 'gateway', subDeviceAddress: 'x1' } }); }, plan: { ...unchanged, devicesReplaced: ['m1'], devicesKept: ['m2', 'm3'] } },
  { name: 'a device without a cloud block has no link to keep', edit: (r) => { r.devices[2] = meter('m3', 'b', 1, { pollIntervalMs: 500 }); }, plan: { ...unchanged, devicesReplaced: ['m3'], devicesKept: ['m1', 'm2'] } },
  { name: 'a device added', edit: (r) => { r.devices.push(meter('m4', 'b', 2)); }, plan: { ...unchanged, devicesAdded: ['m4'], devicesKept: ['m1', 'm2', 'm3'] } },
  { name: 'a device removed', edit: (r) => { r.devices.splice(2, 1); }, plan: { ...unchanged, devicesRemoved: ['m3'], devicesKept: ['m1', 'm2'] } },
  { name: 'a device moved to another bus', edit: (r) => { r.devices[2] = meter('m3', 'a', 3); }, plan: { ...unchanged, devicesReplaced: ['m3'], devicesKept: ['m1', 'm2'] } },
  { name: 'a linked device moved to another bus keeps its link', edit: (r) => { r.devices[0] = meter('m1', 'b', 2, { cloud: { accessToken: 't1' } }); }, plan: { ...unchanged, devicesReplaced: ['m1'], devicesKeepingLink: ['m1'], devicesKept: ['m2', 'm3'] } },
  { name: 'a bus changed: it and only its devices restart', edit: (r) => { r.buses[0] = { ...r.buses[0], timeoutMs: 900 }; }, plan: { ...unchanged, busesRestarted: ['a'], devicesReplaced: ['m1', 'm2'], devicesKeepingLink: ['m1', 'm2'], devicesKept: ['m3'] } },
  { name: 'a share added to a bus: the bus and its devices keep running', edit: (r) => { r.buses[0] = { ...r.buses[0], share: { port: 1502 } }; }, plan: { ...unchanged, identical: false, devicesKept: ['m1', 'm2', 'm3'] } },
  { name: 'a bus added', edit: (r) => { r.buses.push({ name: 'c', kind: 'tcp', host: '127.0.0.1', port: 5022 }); }, plan: { ...unchanged, busesAdded: ['c'], devicesKept: ['m1', 'm2', 'm3'] } },
  { name: 'a bus and its device removed', edit: (r) => { r.buses.splice(1, 1); r.devices.splice(2, 1); }, plan: { ...unchanged, busesRemoved: ['b'], devicesRemoved: ['m3'], devicesKept: ['m1', 'm2'] } },
  { name: 'the log level only', edit: (r) => { r.gateway.logLevel = 'debug'; }, plan: { ...unchanged, identical: false, logLevel: 'debug', devicesKept: ['m1', 'm2', 'm3'] } },
  { name: 'one of the devices sharing a point list changes a point: only it is replaced', edit: (r) => { r.devices[0] = meter('m1', 'a', 1, { cloud: { accessToken: 't1' }, points: [{ id: 'p', table: 'holding', address: 1, type: 'uint16' }] }); }, plan: { ...unchanged, devicesReplaced: ['m1'], devicesKeepingLink: ['m1'], devicesKept: ['m2', 'm3'] } },
  { name: 'the point list every device shares changes: all are replaced', edit: (r) => { for (const d of r.devices) d.points = [{ id: 'p', table: 'holding', address: 0, type: 'int16' }]; }, plan: { ...unchanged, devicesReplaced: ['m1', 'm2', 'm3'], devicesKeepingLink: ['m1', 'm2'], devicesKept: [] } },
  { name: 'devices reordered: nothing restarts, the order is applied', edit: (r) => { r.devices.reverse(); }, plan: { ...unchanged, identical: false, devicesKept: ['m3', 'm2', 'm1'] } },
];

describe('planReload', () => {
  for (const c of cases) {
    it(c.name, () => {
      const next = baseSite();
      c.edit(next);
      const decision = planReload(config(baseSite()), config(next));
      expect(decision.accepted).toBe(true);
      if (decision.accepted) expect(decision.plan).toMatchObject(c.plan);
    });
  }

  it('compares a device as its JSON text would (key order counts, a key holding undefined does not), point lists once', () => {
    const running = config(baseSite());
    const [m1, m2, m3] = running.site.devices;
    const { name, ...rest } = m1!;
    const devices = [{ ...rest, name }, { ...m2!, note: undefined }, { ...m3!, points: [...m3!.points] }];
    const decision = planReload(running, { ...running, site: { ...running.site, devices } });
    expect(decision).toMatchObject({ accepted: true, plan: { identical: false, devicesReplaced: ['m1'], devicesKept: ['m2', 'm3'] } });
  });

  it('keeps a gateway-mode device when another bus gets a sub-device: its default address depends on no other device', () => {
    const before = baseSite();
    before.devices[1] = meter('m2', 'a', 2, { cloud: { accessToken: 't2', mode: 'gateway' } });
    const next = baseSite();
    next.devices[1] = before.devices[1];
    next.devices.push(meter('m4', 'b', 2, { cloud: { accessToken: 't4', mode: 'gateway' } }));
    const decision = planReload(config(before), config(next));
    expect(decision).toMatchObject({ accepted: true, plan: { devicesReplaced: [], devicesKeepingLink: [], devicesAdded: ['m4'], devicesKept: ['m1', 'm2', 'm3'] } });
  });

  it('replaces a gateway-mode device whose address the site file changes', () => {
    const next = baseSite();
    next.devices[1] = meter('m2', 'a', 2, { cloud: { accessToken: 't2', mode: 'gateway', subDeviceAddress: 'x2-new' } });
    const decision = planReload(config(baseSite()), config(next));
    expect(decision).toMatchObject({ accepted: true, plan: { devicesReplaced: ['m2'], devicesKept: ['m1', 'm3'] } });
  });

  it('refuses every gateway-level key that cannot change live, naming each, and applies nothing', () => {
    const next = baseSite();
    next.gateway.stateDir = '/tmp/fg-site-diff-other';
    next.gateway.health = { enabled: true, port: 9181 };
    next.gateway.cloud = { ...(next.gateway.cloud as object), mqttUrl: 'mqtt://127.0.0.1:1884' };
    next.gateway.logLevel = 'debug';
    next.devices.push(meter('m4', 'b', 2));
    const decision = planReload(config(baseSite()), config(next));
    expect(decision.accepted).toBe(false);
    if (decision.accepted) return;
    expect(decision.issues.map((i) => i.path)).toEqual(['gateway.cloud.mqttUrl', 'gateway.health.enabled', 'gateway.health.port', 'gateway.stateDir']);
    for (const issue of decision.issues) expect(issue.message).toMatch(/cannot change while fieldgate runs: restart the service/);
  });

  it('never puts a secret value in a refusal', () => {
    const next = baseSite();
    next.gateway.cloud = { ...(next.gateway.cloud as object), projectKey: 'very-secret-new-key' };
    const decision = planReload(config(baseSite()), config(next));
    expect(JSON.stringify(decision)).not.toContain('very-secret');
    expect(decision).toMatchObject({ accepted: false, issues: [{ path: 'gateway.cloud.projectKey' }] });
  });
});

describe('differingPaths', () => {
  const table: Array<[unknown, unknown, string[]]> = [
    [{ a: 1 }, { a: 1 }, []],
    [{ a: 1 }, { a: 2 }, ['$.a']],
    [{ a: { b: 1, c: 2 } }, { a: { b: 1, c: 3 } }, ['$.a.c']],
    [{ a: 1 }, { b: 1 }, ['$.a', '$.b']],
    [{ a: [1, 2] }, { a: [1, 3] }, ['$.a']],
    [{ a: { b: 1 } }, { a: null }, ['$.a']],
  ];
  for (const [a, b, paths] of table) {
    it(`${JSON.stringify(a)} vs ${JSON.stringify(b)}`, () => expect(differingPaths(a, b, '$')).toEqual(paths));
  }
});
