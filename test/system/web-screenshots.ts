// Screenshots of the commissioning page for docs/web.md, taken with the same Chromium the tests
// use, against the daemon with the simulator and the emulator:
//   node --conditions=fieldgate-source --import tsx test/system/web-screenshots.ts   (writes docs/img/web-*.png)
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { GatewayHandle } from '../../src/ops/gateway-handle.js';
import { startGateway } from '../../src/main.js';
import { silentLogger } from '../../src/ops/log.js';
import { loadConfigWithDigest } from '../../src/ops/site-file.js';
import { freePort } from '../helpers/mosquitto.js';
import { pymodbusRequests } from '../helpers/share-clients.js';
import { PROJECT_KEY, startSite } from './harness.js';
import { launchChromium, pageSiteText } from './web-rig.js';

const OUT = new URL('../../docs/img/', import.meta.url);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const site = await startSite();
let empty: GatewayHandle | undefined;
let gatewayStopped = false;
const port = await freePort();
const sharePort = await freePort();
const file = join(site.stateDir, 'site.yaml');
writeFileSync(file, [
  'gateway:', `  stateDir: ${site.stateDir}`, '  logLevel: silent', '  health: { enabled: false }', `  web: { port: ${port}, allowReload: true }`,
  '  cloud:', `    mqttUrl: mqtt://127.0.0.1:${site.emulator.mqttPort}`, `    apiBaseUrl: http://127.0.0.1:${site.emulator.httpPort}`, `    projectKey: ${PROJECT_KEY}`, '    syncPeriodMs: 0',
  'buses:', `  - { name: plant, kind: tcp, host: 127.0.0.1, port: ${site.sim.tcp?.port ?? 0}, timeoutMs: 500, share: { port: ${sharePort}, cacheMs: 2000 } }`,
  'devices:',
  '  - name: meter-1', '    bus: plant', '    unitId: 1', '    pollIntervalMs: 1s', '    cloud: { accessToken: demo-meter-1-token }', '    points:',
  '      - { id: setpoint, table: holding, address: 0, type: int16, scale: 0.1, unit: "°C", writable: true }',
  '      - { id: speed, table: holding, address: 1, unit: rpm }',
  '      - { id: voltage, table: input, address: 0, scale: 0.1, unit: V }',
  '      - { id: pump, table: coil, address: 0, type: bool }',
  '      - { id: current, table: holding, address: 300, scale: 0.01, unit: A }',
  '  - { name: meter-2, bus: plant, unitId: 2, pollIntervalMs: 1s, cloud: { accessToken: demo-meter-2-token }, points: [{ id: level, table: holding, address: 0, unit: "%" }] }',
  '',
].join('\n'));
const { config, sha256 } = loadConfigWithDigest(file, {});
const gateway = await startGateway(config, { logger: silentLogger(), env: {}, siteFile: file, configSha256: sha256 });
const browser = await launchChromium();
try {
  // The narrowest window the page is laid out for (test/system/web-layout.test.ts).
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  const base = `http://127.0.0.1:${gateway.webPort}`;
  // A minute of a moving value for the sparklines.
  for (let i = 0; i < 40; i++) {
    site.sim.simulator.setRegister(1, 'input', 0, 2300 + Math.round(15 * Math.sin(i / 4)));
    site.sim.simulator.setRegister(1, 'holding', 1, 1400 + i * 3);
    await sleep(1100);
  }
  // A client of the share, for its row on the overview.
  await pymodbusRequests(sharePort, [{ fc: 3, unit: 1, address: 0, count: 2 }, { fc: 3, unit: 1, address: 0, count: 2 }, { fc: 3, unit: 2, address: 0, count: 1 }]);
  await page.goto(`${base}/`);
  await page.waitForSelector('#devices tr[data-device="meter-2"]');
  await sleep(2500);
  await page.screenshot({ path: new URL('web-overview.png', OUT).pathname, fullPage: true });
  await page.goto(`${base}/device/meter-1`);
  await page.waitForSelector('#points tr[data-point="voltage"] svg.spark polyline');
  await sleep(1500);
  await page.screenshot({ path: new URL('web-device.png', OUT).pathname, fullPage: true });
  await page.goto(`${base}/tools`);
  await page.waitForSelector('form#scan');
  await page.fill('#scan-to', '4');
  await page.click('form#scan button[type=submit]');
  await page.waitForSelector('#scan-table');
  await page.fill('#read-count', '4');
  await page.selectOption('#read-type', 'uint16');
  await page.click('form#read button[type=submit]');
  await page.waitForSelector('#read-table');
  await page.screenshot({ path: new URL('web-tools.png', OUT).pathname, fullPage: true });
  // meter-2's unit goes silent: its page opened while it is down.
  site.sim.simulator.setFault(2, { timeout: true });
  while (gateway.status().devices.find((d) => d.name === 'meter-2')?.online !== false) await sleep(200);
  await page.goto(`${base}/device/meter-2`);
  await page.waitForSelector('#points tr[data-point="level"].bad');
  await page.screenshot({ path: new URL('web-device-offline.png', OUT).pathname });
  site.sim.simulator.clearFault(2);
  await page.goto(`${base}/line?bus=plant`);
  await page.waitForSelector('#frames tbody tr');
  await sleep(3000);
  await page.screenshot({ path: new URL('web-line.png', OUT).pathname });
  await page.goto(`${base}/site`);
  await page.waitForSelector('#site-text');
  await page.click('#site-check');
  await page.waitForFunction(() => (globalThis as unknown as { document: { getElementById(id: string): { textContent: string } } }).document.getElementById('site-outcome').textContent === 'valid');
  await page.screenshot({ path: new URL('web-site-file.png', OUT).pathname });
  await gateway.stop();
  gatewayStopped = true;
  await addFlow(page);
} finally {
  await browser.close();
  if (!gatewayStopped) await gateway.stop();
  await empty?.stop();
  await site.close();
}

/** The add-a-device flow from a site with a bus and no device: scan, identification, the checked change, then the new device's page. */
async function addFlow(page: Page): Promise<void> {
  const emptyFile = join(site.stateDir, 'empty-site.yaml');
  writeFileSync(emptyFile, pageSiteText(site, await freePort(), []).replace('devices:\n', 'devices: []   # none yet: added from the page\n'));
  const loaded = loadConfigWithDigest(emptyFile, {});
  empty = await startGateway(loaded.config, { logger: silentLogger(), env: {}, siteFile: emptyFile, configSha256: loaded.sha256 });
  const emptyBase = `http://127.0.0.1:${empty.webPort}`;
  // Unit 2 answers with a Carlo Gavazzi EM24's identification code (input 000Bh).
  site.sim.simulator.setRegister(2, 'input', 11, 71);
  await page.goto(`${emptyBase}/add`);
  await page.fill('#add-scan-to', '4');
  await page.click('form#add-scan button[type=submit]');
  await page.waitForFunction(() => (globalThis as unknown as { document: { querySelector(s: string): { textContent: string } | null } }).document.querySelector('#add-scan-table tr[data-unit="2"] td.identity')?.textContent.startsWith('carlogavazzi') === true);
  await page.click('#add-scan-table button[data-unit="1"]');
  await page.selectOption('#add-profile', 'peacefair-pzem-016');
  await page.fill('#add-name', 'meter-1');
  await page.fill('#add-token', 'demo-meter-1-token');
  await page.click('#add-check');
  await page.waitForFunction(() => (globalThis as unknown as { document: { getElementById(id: string): { textContent: string } } }).document.getElementById('add-outcome').textContent.startsWith('valid'));
  await page.screenshot({ path: new URL('web-add.png', OUT).pathname, fullPage: true });
  await page.click('#add-apply');
  await page.waitForURL(`${emptyBase}/device/meter-1`);
  // A few moving values for the sparkline (the profile polls every 2 s); a flat line has no height, so it is awaited as attached.
  for (let i = 0; i < 6; i++) {
    site.sim.simulator.setRegister(1, 'input', 0, 2300 + (i % 3) * 4);
    await sleep(2100);
  }
  await page.waitForSelector('#points tr[data-point="voltage"] svg.spark polyline', { state: 'attached' });
  await page.screenshot({ path: new URL('web-add-applied.png', OUT).pathname });
}
