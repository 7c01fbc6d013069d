// What the site commands refuse before anything is read or applied (pure), table-driven.
import { describe, expect, it } from 'vitest';
import type { Config } from '../../../src/core/config/config.js';
import { parseApplyParams, parseGenerationParam, planSiteChange } from '../../../src/core/config/remote-site-rules.js';
import { checkConfig } from '../../../src/ops/site-file.js';

const D = 'a'.repeat(64);

describe('site_apply params', () => {
  // Table: [what, params, problem or undefined]
  const cases: Array<[string, Record<string, unknown>, RegExp | undefined]> = [
    ['valid', { text: 'x', baseDigest: D, confirmWithinS: 30 }, undefined],
    ['no confirmation', { text: 'x', baseDigest: D }, undefined],
    ['text not a string', { text: 5, baseDigest: D }, /text must be the site text as a string \(got 5\)/],
    ['text too large', { text: 'x'.repeat(101), baseDigest: D }, /text is 101 bytes, more than the 100 byte limit/],
    ['multi-byte text counted in bytes', { text: 'é'.repeat(51), baseDigest: D }, /102 bytes/],
    ['no digest', { text: 'x' }, /baseDigest must be the digest site_get gave/],
    ['a short digest', { text: 'x', baseDigest: 'abc' }, /baseDigest must be/],
    ['window too short', { text: 'x', baseDigest: D, confirmWithinS: 2 }, /confirmWithinS must be 0 \(no confirmation\) or whole seconds 5\.\.600 \(got 2\)/],
    ['window too long', { text: 'x', baseDigest: D, confirmWithinS: 601 }, /confirmWithinS must be/],
    ['a fractional window', { text: 'x', baseDigest: D, confirmWithinS: 7.5 }, /confirmWithinS must be/],
    ['an unknown param', { text: 'x', baseDigest: D, force: true }, /unknown param\(s\) "force"/],
  ];
  it.each(cases)('%s', (_what, params, problem) => {
    const parsed = parseApplyParams(params, 100, 600);
    if (problem === undefined) expect(parsed.ok).toBe(true);
    else expect(parsed.ok ? '' : parsed.message).toMatch(problem);
  });

  it.each([[0, false], [-1, false], [1.5, false], ['2', false], [3, true]])('generation %s', (generation, ok) => {
    expect(parseGenerationParam({ generation }).ok).toBe(ok);
  });
});

function config(edit: (raw: Record<string, any>) => void = () => undefined): Config {
  const raw: Record<string, any> = {
    gateway: { stateDir: '/tmp/fg-rules', health: { enabled: false }, cloud: { mqttUrl: 'mqtt://127.0.0.1:1883', projectKey: 'pk', identity: { accessToken: 'gw' } } },
    buses: [{ name: 'a', kind: 'tcp', host: '127.0.0.1', port: 5020 }],
    devices: [{ name: 'm1', bus: 'a', unitId: 1, cloud: { accessToken: 't1' }, points: [{ id: 'p', table: 'holding', address: 0 }] }],
  };
  edit(raw);
  const { config: loaded, issues } = checkConfig(raw, {});
  if (!loaded) throw new Error(issues.map((i) => `${i.path}: ${i.message}`).join('; '));
  return loaded;
}

describe('planSiteChange', () => {
  const running = config();
  // Table: [what, edit, issues' paths (refused) or what must come up (accepted)]
  const cases: Array<[string, (raw: Record<string, any>) => void, { refused: string[] } | { buses: string[]; links: string[] }]> = [
    ['a device added', (r) => r.devices.push({ name: 'm2', bus: 'a', unitId: 2, cloud: { accessToken: 't2' }, points: [{ id: 'p', table: 'holding', address: 0 }] }), { buses: [], links: ['m2'] }],
    ['a bus changed', (r) => { r.buses[0].port = 5021; }, { buses: ['a'], links: ['m1'] }],
    ['identity removed', (r) => { delete r.gateway.cloud.identity; }, { refused: ['gateway.cloud.identity'] }],
    ['identity changed', (r) => { r.gateway.cloud.identity.accessToken = 'other'; }, { refused: ['gateway.cloud.identity'] }],
    ['the link moved', (r) => { r.gateway.cloud.mqttUrl = 'mqtt://127.0.0.1:1884'; }, { refused: ['gateway.cloud.mqttUrl'] }],
    ['a key that needs a restart', (r) => { r.gateway.cloud.keepaliveS = 30; }, { refused: ['gateway.cloud.keepaliveS'] }],
  ];
  it.each(cases)('%s', (_what, edit, expected) => {
    const plan = planSiteChange(running, config(edit), new Map());
    if ('refused' in expected) {
      expect(plan.ok).toBe(false);
      if (!plan.ok) expect(plan.issues.map((i) => i.path)).toEqual(expected.refused);
    } else {
      expect(plan.ok).toBe(true);
      if (plan.ok) expect(plan.watch).toEqual(expected);
    }
  });

  it('names the way back once, not also as a key that needs a restart', () => {
    const plan = planSiteChange(running, config((r) => { delete r.gateway.cloud.identity; }), new Map());
    expect(plan.ok ? [] : plan.issues.map((i) => i.message)).toEqual([expect.stringContaining('removes fieldgate\'s own identity')]);
  });
});
