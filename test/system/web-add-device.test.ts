// The no-YAML flow in a real Chromium: from a site with a bus and no device, scan the line (the
// simulator on 127.0.0.1), pick the unit found, a profile from the library, a name and the
// device's credential, Check shows the change of the site file, Apply writes it and reloads, and
// the device's page shows its values as the polls land. Hostile: the add sent twice at once, an
// add and a scan while a reload is running, names with HTML and quotes, an oversized body, no
// CSRF token, and a site whose page may not apply. The tests run in order on one daemon, each
// building on the devices the earlier ones added.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/main.js';
import type { GatewayHandle } from '../../src/ops/gateway-handle.js';
import { silentLogger } from '../../src/ops/log.js';
import { loadConfigWithDigest } from '../../src/ops/site-file.js';
import { freePort } from '../helpers/mosquitto.js';
import { PROJECT_KEY, startSite, type Site } from './harness.js';
import { launchChromium, PAGE_DEADLINE_MS, PageClient, pageSiteText } from './web-rig.js';

const TOKEN = 'demo-meter-1-token';
const HOSTILE_NAME = `"><img src=x onerror="document.title='owned'">'`;

/** The page's site file with the bus and no device yet. */
function emptySite(site: Site, port: number, allowReload = true): string {
  const text = pageSiteText(site, port, []).replace('devices:\n', 'devices: []   # none yet: added from the page\n');
  return allowReload ? text : text.replace(', allowReload: true', '');
}

async function startDaemon(site: Site, name: string, allowReload = true): Promise<{ gateway: GatewayHandle; file: string }> {
  const file = join(site.stateDir, name);
  writeFileSync(file, emptySite(site, await freePort(), allowReload));
  const { config, sha256 } = loadConfigWithDigest(file, {});
  return { gateway: await startGateway(config, { logger: silentLogger(), env: {}, siteFile: file, configSha256: sha256 }), file };
}

/** The running site's text: the newest generation in <stateDir>/site/ (the seed is never written). */
function runningText(stateDir: string): string {
  const dir = join(stateDir, 'site');
  const numbers = readdirSync(dir).flatMap((f) => /^generation-(\d+)\.yaml$/.exec(f)?.[1] ?? []).map(Number);
  return readFileSync(join(dir, `generation-${Math.max(...numbers)}.yaml`), 'utf8');
}

describe('adding a device from the page, without YAML', () => {
  let site: Site;
  let gateway: GatewayHandle;
  let file: string;
  let browser: Browser;
  let base: string;
  const pageErrors: string[] = [];
  const running = (): string => runningText(site.stateDir);

  beforeAll(async () => {
    site = await startSite();
    ({ gateway, file } = await startDaemon(site, 'site.yaml'));
    base = `http://127.0.0.1:${gateway.webPort}`;
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await site?.close();
  });

  async function newPage(): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(PAGE_DEADLINE_MS);
    // Refusals answered 4xx are expected (the console names their status); a script error or a CSP violation is not.
    page.on('console', (m) => { if (m.type() === 'error' && !/status of 4\d\d /.test(m.text())) pageErrors.push(m.text()); });
    page.on('pageerror', (e) => pageErrors.push(e.message));
    return page;
  }

  it('empty site -> scan -> add -> applied -> live values on the device page, the credential never shown', async () => {
    expect(gateway.status().devices).toEqual([]);
    site.sim.simulator.setRegister(2, 'input', 11, 71);
    const page = await newPage();
    const bodies: string[] = [];
    page.on('response', (r) => { if (r.url().includes('/api/')) r.text().then((t) => bodies.push(t), () => undefined); });
    await page.goto(`${base}/`);
    await page.click('nav a[href="/add"]');
    await page.fill('#add-scan-to', '4');
    await page.click('form#add-scan button[type=submit]');
    // Units 1 and 2 answer; 3 and 4 are silent.
    await page.waitForSelector('#add-scan-table tr[data-unit="2"]');
    expect(await page.$$eval('#add-scan-table tbody tr', (trs) => trs.map((tr) => tr.getAttribute('data-unit')))).toEqual(['1', '2']);
    // Unit 2 shows the identification code of a Carlo Gavazzi EM24 (input 000Bh = 71); unit 1 shows none the library knows.
    await expect.poll(() => page.textContent('#add-scan-table tr[data-unit="2"] td.identity'), { timeout: PAGE_DEADLINE_MS }).toMatch(/^carlogavazzi-em24 \(input 11 = 71, .*holding 64514: refused/);
    await expect.poll(() => page.textContent('#add-scan-table tr[data-unit="1"] td.identity'), { timeout: PAGE_DEADLINE_MS }).toMatch(/^the library cannot tell \(input 11 = 0/);
    await page.click('#add-scan-table button[data-unit="2"]');
    expect(await page.inputValue('#add-profile')).toBe('carlogavazzi-em24');
    expect(await page.inputValue('#add-name')).toBe('plant-unit-2');
    await page.fill('#add-name', '');
    await page.click('#add-scan-table button[data-unit="1"]');
    expect(await page.inputValue('#add-unit')).toBe('1');
    expect(await page.inputValue('#add-name')).toBe('plant-unit-1');
    await page.selectOption('#add-profile', 'peacefair-pzem-016');
    await page.fill('#add-name', 'meter-1');
    await page.fill('#add-token', TOKEN);
    await page.click('#add-check');
    await expect.poll(() => page.textContent('#add-outcome'), { timeout: PAGE_DEADLINE_MS }).toMatch(/^valid/);
    const change = await page.textContent('#add-change');
    expect(change).toContain('+   - name: meter-1');
    expect(change).toContain('+     profile: peacefair-pzem-016');
    expect(change).toContain('+     cloud: { accessToken: [redacted] }');
    // Check changed nothing.
    expect(running()).not.toContain('meter-1');
    await page.click('#add-apply');
    await page.waitForURL(`${base}/device/meter-1`);
    await expect.poll(() => page.textContent('#points tr[data-point="voltage"] td.value'), { timeout: PAGE_DEADLINE_MS }).toBe('230.1');
    site.sim.simulator.setRegister(1, 'input', 0, 2312);
    await expect.poll(() => page.textContent('#points tr[data-point="voltage"] td.value'), { timeout: PAGE_DEADLINE_MS }).toBe('231.2');
    expect(await page.textContent('#points tr[data-point="voltage"] td.quality')).toBe('good');
    // The file holds the credential and keeps the operator's comment; no answer carried the credential.
    const written = running();
    expect(written).toContain(`cloud: { accessToken: ${TOKEN} }`);
    expect(written).toContain('devices:   # none yet: added from the page');
    expect(bodies.length).toBeGreaterThan(3);
    expect(bodies.filter((b) => b.includes(TOKEN))).toEqual([]);
    expect(gateway.status().devices.map((d) => d.name)).toEqual(['meter-1']);
    await page.close();
    expect(pageErrors, JSON.stringify(pageErrors)).toEqual([]);
  });

  it('refuses a taken name, a taken unit and a name with HTML and quotes on the page, as text', async () => {
    const page = await newPage();
    await page.goto(`${base}/add`);
    await page.waitForSelector('#add-check');
    await page.selectOption('#add-profile', 'peacefair-pzem-016');
    await page.fill('#add-unit', '2');
    await page.fill('#add-name', 'meter-1');
    await page.click('#add-check');
    await expect.poll(() => page.textContent('#add-outcome'), { timeout: PAGE_DEADLINE_MS }).toBe('a device named "meter-1" is already in the site file');
    expect(await page.getAttribute('#add-outcome', 'class')).toBe('error');
    await page.fill('#add-unit', '1');
    await page.fill('#add-name', 'meter-2');
    await page.click('#add-check');
    await expect.poll(() => page.textContent('#add-outcome'), { timeout: PAGE_DEADLINE_MS }).toBe('unit 1 on bus "plant" is already device "meter-1"');
    await page.fill('#add-unit', '2');
    await page.fill('#add-name', HOSTILE_NAME);
    await page.click('#add-apply');
    await expect.poll(() => page.textContent('#add-outcome'), { timeout: PAGE_DEADLINE_MS }).toContain('name must start with a letter or digit');
    expect(await page.textContent('#add-outcome')).toContain('<img src=x');
    expect(await page.$$('img')).toEqual([]);
    expect(await page.title()).toBe('fieldgate');
    expect(running()).not.toContain('img');
    await page.close();
    expect(pageErrors, JSON.stringify(pageErrors)).toEqual([]);
  });

  it('the add sent twice at once adds one device; the other is refused', async () => {
    const client = new PageClient(base);
    await client.session();
    const add = { bus: 'plant', unitId: 2, profile: 'peacefair-pzem-016', name: 'meter-2', pollIntervalMs: 500 };
    const answers = await Promise.all([client.post('/api/site/device/apply', add), client.post('/api/site/device/apply', add)]);
    const bodies = await Promise.all(answers.map(async (a) => ({ status: a.status, body: (await a.json()) as Record<string, unknown> })));
    const applied = bodies.filter((b) => b.status === 200);
    expect(applied.map((b) => b.body.outcome)).toEqual(['applied']);
    const refused = bodies.find((b) => b.status !== 200);
    expect(refused?.status).toBe(409);
    expect(String(refused?.body.error)).toMatch(/being added already|already in the site file/);
    expect(running().match(/name: meter-2/g)).toHaveLength(1);
    expect(gateway.status().devices.map((d) => d.name).sort()).toEqual(['meter-1', 'meter-2']);
  });

  it('an add and a scan while a reload of the seed runs: both answered; the add never undoes the reload', async () => {
    const client = new PageClient(base);
    await client.session();
    // The operator's edit of the seed file (from the running text), taken in as SIGHUP does.
    writeFileSync(file, running().replace('timeoutMs: 500', 'timeoutMs: 400'));
    const reload = gateway.reloadSite();
    const add = client.post('/api/site/device/apply', { bus: 'plant', unitId: 3, profile: 'peacefair-pzem-016', name: 'meter-3' });
    const scan = await client.post('/api/scan', { bus: 'plant', from: 1, to: 2 });
    // Answered either way: the units found, or why it stopped (the reload restarts the bus it scans).
    const scanned = (await scan.json()) as Record<string, unknown>;
    if (scan.status !== 200) expect([scan.status, typeof scanned.error]).toEqual([503, 'string']);
    expect((await reload).outcome).toBe('applied');
    const answer = await add;
    const body = (await answer.json()) as Record<string, unknown>;
    // One change at a time: the add runs after the reload on the text it moved to, or is refused
    // as made from a text that is no longer the running one (the
    // page's stale-base refusal); never applied over it.
    expect(running()).toContain('timeoutMs: 400');
    expect(answer.status).toBe(200);
    if (body.outcome === 'applied') {
      expect(running()).toContain('name: meter-3');
      expect(gateway.status().devices.map((d) => d.name).sort()).toEqual(['meter-1', 'meter-2', 'meter-3']);
    } else {
      expect([body.outcome, JSON.stringify(body)]).toEqual(['refused', expect.stringMatching(/the running site changed since this page showed it/)]);
      expect(gateway.status().devices.map((d) => d.name).sort()).toEqual(['meter-1', 'meter-2']);
    }
  });

  it('refuses an oversized body (413), a POST without the CSRF token (403) and a body of the wrong shape (400)', async () => {
    const client = new PageClient(base);
    await client.session();
    const huge = await client.post('/api/site/device/check', { bus: 'plant', unitId: 9, profile: 'x', name: 'y'.repeat(1_100_000) });
    expect(huge.status).toBe(413);
    const noToken = await client.post('/api/site/device/apply', { bus: 'plant', unitId: 9, profile: 'peacefair-pzem-016', name: 'meter-9' }, { 'X-CSRF-Token': 'wrong' });
    expect(noToken.status).toBe(403);
    const shape = await client.post('/api/site/device/check', { bus: 'plant', unitId: '9', name: ['meter-9'] });
    expect(shape.status).toBe(400);
    expect(((await shape.json()) as { error: string }).error).toBe('name must be a non-empty string (got a list); profile must be a non-empty string (got undefined); unitId must be a number (got "9")');
    const foreign = await client.post('/api/site/device/check', { bus: 'nowhere', unitId: 9, profile: 'no-such', name: 'meter-9' });
    expect(foreign.status).toBe(400);
    expect(((await foreign.json()) as { error: string }).error).toBe('no bus named "nowhere" in the site file (buses: plant); no profile named "no-such" in the library (fieldgate profiles list)');
    expect(running()).not.toContain('meter-9');
    // The identification of a unit: a known bus and a unit id, or a clear refusal; an unknown action is 404.
    const badBus = await client.post('/api/site/device/identify', { bus: '<b>x</b>', unit: 1 });
    expect([badBus.status, ((await badBus.json()) as { error: string }).error]).toEqual([400, 'bus must be one of plant (got "<b>x</b>")']);
    const badUnit = await client.post('/api/site/device/identify', { bus: 'plant', unit: 999 });
    expect([badUnit.status, ((await badUnit.json()) as { error: string }).error]).toEqual([400, 'unit must be an integer 0..255 (got 999)']);
    expect((await client.post('/api/site/device/remove', { name: 'meter-1' })).status).toBe(404);
  });

  it('a secret typed into any field of the form never comes back: the project key, the new token', async () => {
    const client = new PageClient(base);
    await client.session();
    const secret = 'tok-typed-only-here-0123456789';
    const cases: Array<[number, Record<string, unknown>]> = [
      [409, { bus: 'plant', unitId: 1, profile: 'peacefair-pzem-016', name: PROJECT_KEY }],
      [200, { bus: 'plant', unitId: 9, profile: 'peacefair-pzem-016', name: PROJECT_KEY }],
      [400, { bus: PROJECT_KEY, unitId: 9, profile: 'peacefair-pzem-016', name: 'meter-9' }],
      [400, { bus: 'plant', unitId: 9, profile: secret, name: secret, accessToken: secret }],
      [400, { bus: 'plant', unitId: 9, profile: 'peacefair-pzem-016', name: 'meter-9', accessToken: `${secret} ${PROJECT_KEY}` }],
      [200, { bus: 'plant', unitId: 9, profile: 'peacefair-pzem-016', name: 'meter-9', accessToken: secret }],
    ];
    for (const [status, add] of cases) {
      const answer = await client.post('/api/site/device/check', add);
      const text = await answer.text();
      expect(answer.status).toBe(status);
      if (status === 200) expect(text).toContain('"valid":true');
      if ('accessToken' in add && status === 200) expect(text).toContain('accessToken: [redacted]');
      expect(text).not.toContain(PROJECT_KEY);
      expect(text).not.toContain(secret);
    }
  });

  it('a site-file page open in the same session keeps its placeholders: no token lands in another device\'s place', async () => {
    const client = new PageClient(base);
    await client.session();
    const open = (await (await fetch(`${base}/api/site`, { headers: client.headers() })).json()) as { text: string };
    // A token longer than every secret of the file: shown first, it would take {{secret-1}} from meter-1's.
    const longer = 'tok-of-meter-seven-0123456789abcdef';
    const added = await client.post('/api/site/device/apply', { bus: 'plant', unitId: 7, profile: 'peacefair-pzem-016', name: 'meter-7', accessToken: longer });
    expect(((await added.json()) as Record<string, unknown>).outcome).toBe('applied');
    // The next add reads the file again, the longer token in it now.
    expect((await client.post('/api/site/device/check', { bus: 'plant', unitId: 8, profile: 'peacefair-pzem-016', name: 'meter-8' })).status).toBe(200);
    // The page opened before the adds applies its text (without meter-7): refused, since the
    // running site moved on; nothing of it lands.
    const stale = await client.post('/api/site/apply', { text: open.text });
    expect(((await stale.json()) as Record<string, unknown>).outcome).toBe('refused');
    expect(running()).toContain(longer);
    // A page opened now applies an edit of what it shows: every placeholder means what it meant.
    const fresh = (await (await fetch(`${base}/api/site`, { headers: client.headers() })).json()) as { text: string };
    const edited = await client.post('/api/site/apply', { text: `${fresh.text.replace(/timeoutMs: \d+/, 'timeoutMs: 450')}# checked after the adds\n` });
    expect(((await edited.json()) as Record<string, unknown>).outcome).toBe('applied');
    const written = running();
    expect(written).toContain('# checked after the adds');
    expect(written).toContain(`cloud: { accessToken: ${TOKEN} }`);
    expect(written).toContain(`projectKey: ${PROJECT_KEY}`);
    expect(written).toMatch(new RegExp(`name: meter-7[^]*accessToken: ${longer}`));
    expect(written.split(longer)).toHaveLength(2);
  });

  it('on a site whose page may not apply: Check answers, Apply is refused (403) and not offered', async () => {
    const other = await startDaemon(site, 'check-only.yaml', false);
    try {
      const client = new PageClient(`http://127.0.0.1:${other.gateway.webPort}`);
      await client.session();
      const add = { bus: 'plant', unitId: 1, profile: 'peacefair-pzem-016', name: 'meter-1' };
      const checked = await client.post('/api/site/device/check', add);
      expect(checked.status).toBe(200);
      expect(((await checked.json()) as Record<string, unknown>).valid).toBe(true);
      const applied = await client.post('/api/site/device/apply', add);
      expect(applied.status).toBe(403);
      expect(((await applied.json()) as { error: string }).error).toBe('applying a site file from the page is off (gateway.web.allowReload)');
      const page = await newPage();
      await page.goto(`${client.base}/add`);
      await page.waitForSelector('#add-check');
      expect(await page.$('#add-apply')).toBeNull();
      expect(await page.textContent('#app')).toContain('Applying from the page is off (gateway.web.allowReload)');
      await page.close();
      expect(readFileSync(other.file, 'utf8')).not.toContain('meter-1');
    } finally {
      await other.gateway.stop();
    }
    expect(pageErrors, JSON.stringify(pageErrors)).toEqual([]);
  });
});
