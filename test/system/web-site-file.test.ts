// The site-file page in Chromium against the daemon started from a real site file: shown with
// its secrets hidden, an edited file refused with every problem, a valid one applied by reload as
// a new generation in the state directory (the seed file stays as the operator wrote it).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/main.js';
import type { GatewayHandle } from '../../src/ops/gateway-handle.js';
import { silentLogger } from '../../src/ops/log.js';
import { loadConfigWithDigest } from '../../src/ops/site-file.js';
import { freePort } from '../helpers/mosquitto.js';
import { PROJECT_KEY, startSite, type Site } from './harness.js';
import { launchChromium, meterEntry as meter, pageSiteText as siteText, PAGE_DEADLINE_MS } from './web-rig.js';

const TOKEN = 'demo-meter-1-token';

describe('site-file page in Chromium', () => {
  let site: Site;
  let gateway: GatewayHandle;
  let browser: Browser;
  let file: string;
  let base: string;

  beforeAll(async () => {
    site = await startSite();
    const port = await freePort();
    file = join(site.stateDir, 'site.yaml');
    writeFileSync(file, siteText(site, port, [meter('meter-1', 1, TOKEN)]));
    const { config, sha256 } = loadConfigWithDigest(file, {});
    gateway = await startGateway(config, { logger: silentLogger(), env: {}, siteFile: file, configSha256: sha256 });
    base = `http://127.0.0.1:${gateway.webPort}`;
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await site?.close();
  });

  async function edit(page: Page, change: (text: string) => string, button: '#site-check' | '#site-apply'): Promise<string> {
    const text = await page.inputValue('#site-text');
    await page.fill('#site-text', change(text));
    await page.$eval('#site-outcome', (node) => { node.textContent = ''; });
    await page.click(button);
    await expect.poll(async () => (await page.textContent('#site-outcome')) ?? '', { timeout: PAGE_DEADLINE_MS }).not.toMatch(/^$|checking/);
    return (await page.textContent('#site-outcome')) ?? '';
  }

  it('shows the file without its secrets, refuses an edit with every problem, applies a valid one by reload', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(PAGE_DEADLINE_MS);
    // On loopback without a password no login is asked.
    await page.goto(`${base}/site`);
    await page.waitForSelector('#site-text');
    const shown = await page.inputValue('#site-text');
    expect(shown).not.toContain(TOKEN);
    expect(shown).not.toContain(PROJECT_KEY);
    expect(shown).toContain('{{secret-');
    expect(shown).toContain('name: meter-1');

    const broken = await edit(page, (t) => t.replace('pollIntervalMs: 500', 'pollIntervalMs: -5').replace('unitId: 1', 'unitId: 1\n    colour: red'), '#site-check');
    expect(broken).toContain('2 problem(s)');
    const problems = await page.$$eval('#site-problems li', (lis) => lis.map((li) => li.textContent));
    expect(problems.some((p) => p?.startsWith('devices[0].pollIntervalMs'))).toBe(true);
    expect(problems.some((p) => p?.startsWith('devices[0].colour'))).toBe(true);
    expect(await edit(page, (t) => t, '#site-apply')).toContain('refused');
    expect(readFileSync(file, 'utf8')).not.toContain('colour');
    expect(gateway.status().config?.generation).toBe(1);

    await page.reload();
    await page.waitForSelector('#site-text');
    const added = await edit(page, (t) => `${t.trimEnd()}\n${meter('meter-2', 2, 'demo-meter-2-token')}\n`, '#site-check');
    expect(added).toBe('valid');
    expect(await edit(page, (t) => t, '#site-apply')).toContain('applied, generation 2');
    expect(gateway.status().devices.map((d) => d.name)).toEqual(['meter-1', 'meter-2']);
    // The secrets went back in: the generation on disk has the real token, no placeholder; the seed is untouched.
    expect(readFileSync(file, 'utf8')).not.toContain('meter-2');
    const written = readFileSync(join(site.stateDir, 'site', 'generation-2.yaml'), 'utf8');
    expect(written).toContain(`accessToken: ${TOKEN}`);
    expect(written).not.toContain('{{secret-');
    await page.close();
  }, 120_000);
});
