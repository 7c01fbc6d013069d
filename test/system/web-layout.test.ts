// The page on a site without a cloud and with a bus share, in Chromium at 1,280 px: no cloud item
// anywhere (no links, no outbox, no "Read the cloud's values"), a shares section that counts a
// client's requests and cache hits, and every view as wide as the window at most.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/main.js';
import type { GatewayHandle } from '../../src/ops/gateway-handle.js';
import { silentLogger } from '../../src/ops/log.js';
import { loadConfigWithDigest } from '../../src/ops/site-file.js';
import { freePort } from '../helpers/mosquitto.js';
import { pymodbusRequests } from '../helpers/share-clients.js';
import { startSite, type Site } from './harness.js';
import { launchChromium, PAGE_DEADLINE_MS } from './web-rig.js';

const WIDTH = 1280;

describe('page without a cloud, with a share, at 1,280 px', () => {
  let site: Site;
  let gateway: GatewayHandle;
  let browser: Browser;
  let base: string;
  let sharePort: number;

  beforeAll(async () => {
    site = await startSite();
    const [webPort, share] = [await freePort(), await freePort()];
    sharePort = share;
    const file = join(site.stateDir, 'site.yaml');
    writeFileSync(file, [
      'gateway:', `  stateDir: ${site.stateDir}`, '  logLevel: silent', '  health: { enabled: false }', `  web: { port: ${webPort} }`,
      'buses:', `  - { name: plant, kind: tcp, host: 127.0.0.1, port: ${site.sim.tcp?.port ?? 0}, timeoutMs: 500, share: { port: ${sharePort}, cacheMs: 60000 } }`,
      'devices:',
      '  - name: boiler-house-main-energy-meter-with-a-long-name', '    bus: plant', '    unitId: 1', '    pollIntervalMs: 500', '    points:',
      '      - { id: setpoint_temperature_of_the_supply_line, table: holding, address: 0, type: int16, scale: 0.1, unit: "°C" }',
      '      - { id: speed, table: holding, address: 1, unit: rpm }',
      '      - { id: voltage, table: input, address: 0, scale: 0.1, unit: V }',
      '      - { id: not_there, table: holding, address: 300, scale: 0.01, unit: A }',
      '  - { name: meter-2, bus: plant, unitId: 2, pollIntervalMs: 500, points: [{ id: level, table: holding, address: 0, unit: "%" }] }',
      '',
    ].join('\n'));
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

  async function newPage(): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: WIDTH, height: 800 } });
    page.setDefaultTimeout(PAGE_DEADLINE_MS);
    return page;
  }

  const width = (page: Page) => page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth);

  it('shows no cloud item, a shares section with the client\'s requests and cache hits, and fits the window', async () => {
    // A client of the share reads twice: the second at least is answered from the cache (the polls fill it too).
    const answers = await pymodbusRequests(sharePort, [{ fc: 3, unit: 1, address: 0, count: 2 }, { fc: 3, unit: 1, address: 0, count: 2 }]);
    expect(answers.every((a) => 'registers' in a)).toBe(true);
    const page = await newPage();
    await page.goto(`${base}/`);
    await page.waitForSelector('#shares tr[data-share="plant"]');
    await expect.poll(async () => page.$$eval('#shares thead th', (ths) => ths.map((th) => th.textContent)), { timeout: PAGE_DEADLINE_MS }).toContain('cache hits');
    await expect.poll(async () => {
      const cells = await page.$$eval('#shares tr[data-share="plant"] td', (tds) => tds.map((td) => td.textContent));
      return { requests: Number(cells[5]), fromCache: Number(cells[6]) >= 1 && Number(cells[6]) <= 2, clients: cells[4] };
    }, { timeout: PAGE_DEADLINE_MS }).toEqual({ requests: 2, fromCache: true, clients: '0' });
    expect(await page.$('#links')).toBeNull();
    expect(await page.$('#outbox')).toBeNull();
    await expect.poll(() => page.textContent('#devices tr[data-device="meter-2"] .values'), { timeout: PAGE_DEADLINE_MS }).toMatch(/^level \d+ %$/);
    expect(await width(page)).toBeLessThanOrEqual(WIDTH);

    await page.goto(`${base}/device/boiler-house-main-energy-meter-with-a-long-name`);
    await page.waitForSelector('#points tr[data-point="not_there"].bad');
    expect(await page.$('#cloud-read')).toBeNull();
    expect(await page.$$eval('#points thead th', (ths) => ths.map((th) => th.textContent))).not.toContain('in the cloud');
    expect(await width(page)).toBeLessThanOrEqual(WIDTH);

    await page.goto(`${base}/tools`);
    await page.waitForSelector('form#scan');
    await page.fill('#scan-to', '4');
    await page.click('form#scan button[type=submit]');
    await page.waitForSelector('#scan-table');
    await page.fill('#read-count', '8');
    await page.selectOption('#read-type', 'uint16');
    await page.click('form#read button[type=submit]');
    await page.waitForSelector('#read-table');
    expect(await page.$$eval('#read-table thead th', (ths) => ths.map((th) => th.textContent))).toEqual(['register', 'raw', 'hex', 'value (uint16)']);
    expect(await width(page)).toBeLessThanOrEqual(WIDTH);

    // The add page with a scan's units, their identification (long lists of registers) and a checked change.
    await page.goto(`${base}/add`);
    await page.fill('#add-scan-to', '3');
    await page.click('form#add-scan button[type=submit]');
    await expect.poll(() => page.textContent('#add-scan-table tr[data-unit="2"] td.identity'), { timeout: PAGE_DEADLINE_MS }).toMatch(/^the library cannot tell/);
    expect(await page.$('#add-token')).toBeNull();
    await page.fill('#add-unit', '3');
    await page.fill('#add-name', 'boiler-house-return-line-energy-meter-with-a-long-name');
    await page.click('#add-check');
    await expect.poll(() => page.textContent('#add-outcome'), { timeout: PAGE_DEADLINE_MS }).toMatch(/^valid/);
    expect(await width(page)).toBeLessThanOrEqual(WIDTH);
    await page.close();
  }, 120_000);
});
