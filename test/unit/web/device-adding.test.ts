// The add flow's orchestration with a fake site page: the form's fields checked by type, the text
// the session is shown is the one changed and handed to the page's own check() or apply(), one
// add at a time, and the refusals' statuses.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../../src/core/config/config.js';
import type { DeviceProfile } from '../../../src/core/config/profile-types.js';
import { siteRedaction } from '../../../src/core/config/site-redaction.js';
import { silentLogger } from '../../../src/ops/log.js';
import { loadConfigWithDigest } from '../../../src/ops/site-file.js';
import { DeviceAdding, readNewDevice } from '../../../src/ops/web/device-adding.js';
import type { SiteAnswer, SiteFileView } from '../../../src/ops/web/site-view.js';

const SHOWN = 'gateway:\n  stateDir: /tmp/x\n  cloud: { mqttUrl: "mqtt://127.0.0.1:1", projectKey: {{secret-1}} }\nbuses:\n  - { name: line, kind: tcp, host: 127.0.0.1, port: 1502 }\ndevices: []\n';
const PROFILE = { name: 'peacefair-pzem-016', vendor: 'Peacefair', model: 'PZEM-016', points: [], device: {}, file: 'x' } as unknown as DeviceProfile;

function config(): Config {
  const dir = mkdtempSync(join(tmpdir(), 'fg-add-'));
  const file = join(dir, 'site.yaml');
  writeFileSync(file, `gateway:\n  stateDir: ${dir}\n  cloud: { mqttUrl: "mqtt://127.0.0.1:1", projectKey: pk-secret-value }\nbuses:\n  - { name: line, kind: tcp, host: 127.0.0.1, port: 1502 }\ndevices: []\n`);
  return loadConfigWithDigest(file, {}).config;
}

/** The site page's three calls, recorded; check and apply wait for `release` when it is set. */
class FakeSite {
  calls: Array<{ what: string; session: string; text?: unknown }> = [];
  release: Promise<void> | undefined;
  private readonly redaction = siteRedaction({});
  show(session: string): SiteAnswer {
    this.calls.push({ what: 'show', session });
    return { ok: true, body: this.redaction.json({ text: SHOWN, path: '/etc/site.yaml', hidden: 1 }) };
  }
  async check(session: string, text: unknown): Promise<SiteAnswer> {
    this.calls.push({ what: 'check', session, text });
    await this.release;
    return { ok: true, body: this.redaction.json({ valid: true, problems: [] }) };
  }
  async apply(session: string, text: unknown): Promise<SiteAnswer> {
    this.calls.push({ what: 'apply', session, text });
    await this.release;
    return { ok: true, body: this.redaction.json({ outcome: 'applied', generation: 2, problems: [] }) };
  }
}

function adding(site: FakeSite): DeviceAdding {
  const running = config();
  return new DeviceAdding({ site: site as unknown as SiteFileView, current: () => running, log: silentLogger(), library: () => [PROFILE] });
}

const FORM = { bus: 'line', unitId: 3, profile: 'peacefair-pzem-016', name: 'meter-1' };

describe('readNewDevice', () => {
  it.each([
    ['a whole form', { ...FORM, pollIntervalMs: 500, accessToken: 'tok-1' }, { ok: true, device: { ...FORM, pollIntervalMs: 500, accessToken: 'tok-1' } }],
    ['empty optional fields left out', { ...FORM, pollIntervalMs: '', accessToken: '' }, { ok: true, device: FORM }],
    ['not an object', [FORM], { ok: false, error: 'name must be a non-empty string (got undefined); bus must be a non-empty string (got undefined); profile must be a non-empty string (got undefined); unitId must be a number (got undefined)' }],
    ['a unit as text', { ...FORM, unitId: '3' }, { ok: false, error: 'unitId must be a number (got "3")' }],
    ['an infinite period', { ...FORM, pollIntervalMs: 1e400 }, { ok: false, error: 'pollIntervalMs must be a number (got Infinity)' }],
    ['an empty name', { ...FORM, name: '' }, { ok: false, error: 'name must be a non-empty string (got "")' }],
    ['a token as a number', { ...FORM, accessToken: 12345 }, { ok: false, error: 'accessToken must be a non-empty string (got 12345)' }],
  ])('%s', (_what, body, expected) => {
    expect(readNewDevice(body)).toEqual(expected);
  });
});

describe('DeviceAdding', () => {
  it('changes the text the session is shown and hands it to the page\'s check(), then apply(), under the add flow\'s own key', async () => {
    const site = new FakeSite();
    const flow = adding(site);
    const checked = await flow.add('session-a', { ...FORM, accessToken: 'tok-new-device-1' }, false);
    expect(checked.ok && checked.body).toMatchObject({ valid: true, device: 'meter-1', change: { at: 6, removed: ['devices: []'] } });
    expect(JSON.stringify(checked)).not.toContain('tok-new-device-1');
    expect(JSON.stringify(checked)).toContain('cloud: { accessToken: [redacted] }');
    const applied = await flow.add('session-a', FORM, true);
    expect(applied.ok && applied.body).toMatchObject({ outcome: 'applied', generation: 2, device: 'meter-1' });
    // Under a key of its own: a site-file page open in the same session keeps its placeholders' numbers.
    expect(site.calls.map((c) => `${c.what}:${c.session}`)).toEqual(['show:session-a add-device', 'check:session-a add-device', 'show:session-a add-device', 'apply:session-a add-device']);
    const text = String(site.calls[1].text);
    expect(text).toContain('projectKey: {{secret-1}}');
    expect(text).toContain('    cloud: { accessToken: tok-new-device-1 }');
  });

  it('one add at a time: a second while the first waits for the page is refused 409, and goes once the first is done', async () => {
    const site = new FakeSite();
    let release!: () => void;
    site.release = new Promise((resolve) => (release = resolve));
    const flow = adding(site);
    const first = flow.add('a', FORM, true);
    const second = await flow.add('b', { ...FORM, name: 'meter-2', unitId: 4 }, true);
    expect(second).toMatchObject({ ok: false, status: 409, error: 'a device is being added already: try again when that is done' });
    release();
    expect((await first).ok).toBe(true);
    expect((await flow.add('b', { ...FORM, name: 'meter-2', unitId: 4 }, false)).ok).toBe(true);
  });

  it.each([
    ['a unit out of the TCP range is 400', { ...FORM, unitId: 300 }, 400],
    ['an unknown profile is 400', { ...FORM, profile: 'nope' }, 400],
    ['a wrong shape is 400', { ...FORM, unitId: 'x' }, 400],
  ])('%s', async (_what, body, status) => {
    const flow = adding(new FakeSite());
    expect(await flow.add('a', body, false)).toMatchObject({ ok: false, status });
  });
});
