// The commissioning page in a real Chromium (Debian's, driven by playwright-core; no browser
// download) against the daemon with the simulator and the emulator.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeviceConfig } from '../../src/core/config/site-types.js';
import { startGateway } from '../../src/main.js';
import type { GatewayHandle } from '../../src/ops/gateway-handle.js';
import { silentLogger } from '../../src/ops/log.js';
import { hashPassword } from '../../src/ops/web/password.js';
import { meterDevice, startSite, type Site } from './harness.js';
import { launchChromium, PAGE_DEADLINE_MS, withWeb } from './web-rig.js';

const PASSWORD = 'commissioning-day-1';

function meterWithFailingPoint(): DeviceConfig {
  const device = meterDevice('meter-1', 1, 'demo-meter-1-token');
  // Past the simulated unit's 200 holding registers: the unit refuses it (illegal address) on every poll.
  const bad = { ...device.points[1], id: 'beyond', address: 300, writable: false, unit: 'A' };
  const voltage = { ...device.points[2], unit: 'V' };
  return { ...device, points: [device.points[0], device.points[1], voltage, device.points[3], bad] };
}

describe('commissioning page in Chromium', () => {
  let site: Site;
  let gateway: GatewayHandle;
  let browser: Browser;
  let base: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    site = await startSite();
    const devices = [meterWithFailingPoint(), meterDevice('meter-2', 2, 'demo-meter-2-token')];
    gateway = await startGateway(withWeb(site.config(devices), { passwordHash: await hashPassword(PASSWORD), allowWrites: true }), { logger: silentLogger(), env: {} });
    base = `http://127.0.0.1:${gateway.webPort}`;
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await site?.close();
  });

  async function newPage(): Promise<Page> {
    const page = await browser.newPage();
    page.setDefaultTimeout(PAGE_DEADLINE_MS);
    // A CSP violation or a script error shows up here: the page must have none.
    // The wrong password's and the logged-out fetch's 401s, and the bad read's 400, are expected; nothing else is.
    page.on('console', (m) => { if (m.type() === 'error' && !/status of 40[01] /.test(m.text())) pageErrors.push(m.text()); });
    page.on('pageerror', (e) => pageErrors.push(e.message));
    return page;
  }

  async function logIn(page: Page): Promise<void> {
    await page.goto(`${base}/`);
    await page.fill('#password', PASSWORD);
    await page.click('form#login button[type=submit]');
    await page.waitForSelector('#devices');
  }

  it('refuses a wrong password, logs in, lists every device on the overview, logs out', async () => {
    const page = await newPage();
    await page.goto(`${base}/`);
    await page.fill('#password', 'not-the-password');
    await page.click('form#login button[type=submit]');
    await expect.poll(() => page.textContent('#login-error'), { timeout: PAGE_DEADLINE_MS }).toBe('wrong password');
    await page.fill('#password', PASSWORD);
    await page.click('form#login button[type=submit]');
    await page.waitForSelector('#devices tr[data-device="meter-1"]');
    await page.waitForSelector('#devices tr[data-device="meter-2"]');
    const rows = await page.$$eval('#devices tbody tr', (trs) => trs.map((tr) => tr.getAttribute('data-device')));
    expect(rows.sort()).toEqual(['meter-1', 'meter-2']);
    await page.waitForSelector('#buses tbody tr');
    expect(await page.textContent('#buses tbody tr')).toContain('plant');
    // The failing point shows on the overview too.
    await expect.poll(() => page.textContent('#devices tr[data-device="meter-1"]'), { timeout: PAGE_DEADLINE_MS }).toContain('beyond');
    await page.click('#logout');
    await page.waitForSelector('form#login');
    const after = await page.evaluate(async () => (await fetch('/api/status')).status);
    expect(after).toBe(401);
    await page.close();
    expect(pageErrors, JSON.stringify(pageErrors)).toEqual([]);
  });

  it('the device page shows each point, updates a changed value live and shows the failing point', async () => {
    const page = await newPage();
    await logIn(page);
    await page.click('#devices a[href="/device/meter-1"]');
    await page.waitForSelector('#points tr[data-point="voltage"]');
    await expect.poll(() => page.textContent('#points tr[data-point="voltage"] td.value'), { timeout: PAGE_DEADLINE_MS }).toBe('230.1');
    expect(await page.textContent('#points tr[data-point="voltage"]')).toContain('V');
    const url = page.url();
    // The change comes over the event stream: the page is never reloaded.
    site.sim.simulator.setRegister(1, 'input', 0, 2350);
    await expect.poll(() => page.textContent('#points tr[data-point="voltage"] td.value'), { timeout: PAGE_DEADLINE_MS }).toBe('235');
    expect(page.url()).toBe(url);
    expect(await page.textContent('#points tr[data-point="voltage"] td.quality')).toBe('good');
    await page.waitForSelector('#points tr[data-point="voltage"] svg.spark polyline');
    // The cloud's view (interface B of the emulator): the reported value arrived there too.
    await expect.poll(async () => {
      await page.click('#cloud-read');
      await page.waitForFunction(() => !(globalThis as unknown as { document: { getElementById(id: string): { textContent: string } } }).document.getElementById('cloud-result').textContent.startsWith('reading'));
      return page.textContent('#points tr[data-point="voltage"] td.cloud');
    }, { timeout: PAGE_DEADLINE_MS }).toBe('235');
    // The refused point turns visible: marked bad, with the device's answer.
    await expect.poll(() => page.getAttribute('#points tr[data-point="beyond"]', 'class'), { timeout: PAGE_DEADLINE_MS }).toBe('bad');
    expect(await page.textContent('#points tr[data-point="beyond"] td.health')).toMatch(/refused \(exception 2/);
    await page.close();
    expect(pageErrors, JSON.stringify(pageErrors)).toEqual([]);
  });

  it('a device that starts refusing turns its points visible as failing on the open page', async () => {
    const page = await newPage();
    await logIn(page);
    await page.goto(`${base}/device/meter-2`);
    await expect.poll(() => page.textContent('#points tr[data-point="setpoint"] td.quality'), { timeout: PAGE_DEADLINE_MS }).toBe('good');
    expect(await page.getAttribute('#points tr[data-point="setpoint"]', 'class')).toBe('');
    site.sim.simulator.setFault(2, { exception: { code: 4 } });
    try {
      await expect.poll(() => page.getAttribute('#points tr[data-point="setpoint"]', 'class'), { timeout: PAGE_DEADLINE_MS }).toBe('bad');
      // The header follows the page's status feed, which may come a tick after the point's row.
      await expect.poll(() => page.textContent('#device-state'), { timeout: PAGE_DEADLINE_MS }).toContain('OFFLINE');
    } finally {
      site.sim.simulator.clearFault(2);
    }
    await expect.poll(() => page.getAttribute('#points tr[data-point="setpoint"]', 'class'), { timeout: PAGE_DEADLINE_MS }).toBe('');
    await page.close();
    expect(pageErrors, JSON.stringify(pageErrors)).toEqual([]);
  });

  it('a device page opened while its unit is down shows every point stale with the cause, none ok', async () => {
    site.sim.simulator.setFault(2, { timeout: true });
    try {
      await expect.poll(() => gateway.status().devices.find((d) => d.name === 'meter-2')?.online, { timeout: PAGE_DEADLINE_MS }).toBe(false);
      const page = await newPage();
      await logIn(page);
      await page.goto(`${base}/device/meter-2`);
      await page.waitForSelector('#points tr[data-point="setpoint"]');
      expect(await page.textContent('#device-state')).toMatch(/^OFFLINE \(.+\)/);
      // The last value read stays in view, marked stale.
      expect(await page.textContent('#points tr[data-point="setpoint"] td.value')).toMatch(/^-?\d/);
      const rows = await page.$$eval('#points tbody tr', (trs) => trs.map((tr) => ({ cls: tr.className, quality: tr.querySelector('.quality')?.textContent, health: tr.querySelector('.health')?.textContent })));
      expect(rows.length).toBeGreaterThan(0);
      for (const r of rows) {
        expect(r).toMatchObject({ cls: 'bad', quality: 'stale' });
        expect(r.health).toMatch(/^device offline: ./);
      }
      await page.close();
    } finally {
      site.sim.simulator.clearFault(2);
    }
    expect(pageErrors, JSON.stringify(pageErrors)).toEqual([]);
  });

  it('the overview shows each device\'s values with their units', async () => {
    const page = await newPage();
    await logIn(page);
    await expect.poll(() => page.textContent('#devices tr[data-device="meter-1"] .values'), { timeout: PAGE_DEADLINE_MS }).toMatch(/voltage \d+(\.\d+)? V/);
    await page.close();
  });

  it('the scan form finds the simulated units and the read form reads a register, through the running bus', async () => {
    const page = await newPage();
    await logIn(page);
    await page.click('nav a[href="/tools"]');
    await page.waitForSelector('form#scan');
    await page.fill('#scan-from', '1');
    await page.fill('#scan-to', '4');
    await page.click('form#scan button[type=submit]');
    // Results are tables: a scan's units with their answer and time, a read's registers raw and in hex.
    await page.waitForSelector('#scan-table');
    expect(await page.$$eval('#scan-table tbody tr', (trs) => trs.map((tr) => tr.children[0].textContent))).toEqual(['1', '2']);
    expect(await page.textContent('#scan-table tbody tr:first-child')).toMatch(/value.*holding 0 = \d+.*\d+ ms/);
    await page.fill('#read-unit', '1');
    await page.fill('#read-address', '0');
    await page.fill('#read-count', '2');
    await page.click('form#read button[type=submit]');
    await page.waitForSelector('#read-table');
    expect(await page.$$eval('#read-table tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)))).toEqual([
      ['holding 0', '215', '0x00D7', ''], ['holding 1', '1450', '0x05AA', ''],
    ]);
    // A bad request is answered with its problem, nothing read.
    await page.fill('#read-unit', '300');
    await page.click('form#read button[type=submit]');
    await expect.poll(() => page.textContent('#read-result'), { timeout: PAGE_DEADLINE_MS }).toContain('unit must be an integer 0..255');
    await page.close();
    expect(pageErrors, JSON.stringify(pageErrors)).toEqual([]);
  });

  it('with allowWrites, a point is written from the device page as a cloud push is, and a bad value is refused unwritten', async () => {
    const page = await newPage();
    await logIn(page);
    await page.goto(`${base}/device/meter-1`);
    const row = '#points tr[data-point="setpoint"]';
    await page.fill(`${row} input.write-value`, '42.5');
    await page.click(`${row} form.write button`);
    await expect.poll(() => page.textContent('#write-result'), { timeout: PAGE_DEADLINE_MS }).toBe('setpoint written, read back: 42.5');
    expect(site.sim.simulator.getRegister(1, 'holding', 0)).toBe(425);
    // Above the point's max (100): refused before the bus is touched.
    await page.fill(`${row} input.write-value`, '500');
    await page.click(`${row} form.write button`);
    await expect.poll(() => page.textContent('#write-result'), { timeout: PAGE_DEADLINE_MS }).toMatch(/^setpoint: .*100/);
    expect(site.sim.simulator.getRegister(1, 'holding', 0)).toBe(425);
    // A read-only point has no write form.
    expect(await page.$('#points tr[data-point="voltage"] form.write')).toBeNull();
    await page.close();
    expect(pageErrors, JSON.stringify(pageErrors)).toEqual([]);
  });

  it('the line page shows the bus\'s transactions live: requests, replies with answer times, the refused read', async () => {
    const page = await newPage();
    await logIn(page);
    await page.click('nav a[href="/line"]');
    await page.waitForSelector('#frames');
    // A poll's input read of meter-1 (unit 1, FC4 from address 0) and its answer.
    await expect.poll(() => page.$$eval('#frames tbody tr', (trs) => trs.map((tr) => tr.textContent ?? '')), { timeout: PAGE_DEADLINE_MS })
      .toEqual(expect.arrayContaining([expect.stringMatching(/request1404 00 00 00 01sent/), expect.stringMatching(/reply1404 02 [0-9a-f]{2} [0-9a-f]{2}\d+ msok/)]));
    // A unit that refuses: its exception (4, device failure) in the reply PDU, marked.
    site.sim.simulator.setFault(2, { exception: { code: 4 } });
    try {
      await expect.poll(() => page.$$eval('#frames tbody tr.bad', (trs) => trs.map((tr) => tr.textContent ?? '')), { timeout: PAGE_DEADLINE_MS })
        .toEqual(expect.arrayContaining([expect.stringMatching(/reply2383 04\d+ msModbusExceptionError/)]));
    } finally {
      site.sim.simulator.clearFault(2);
    }
    await page.close();
    expect(pageErrors, JSON.stringify(pageErrors)).toEqual([]);
  });

  it('a unit that stops answering shows its cool-down on the overview\'s bus row, and leaves it when it answers again', async () => {
    const page = await newPage();
    await logIn(page);
    const cell = '#buses tr[data-bus="plant"] .cooling';
    await expect.poll(() => page.textContent(cell), { timeout: PAGE_DEADLINE_MS }).toBe('-');
    site.sim.simulator.setFault(2, { timeout: true });
    try {
      // Three timeouts (the rig's afterTimeouts) and meter-2's unit rests; the overview refreshes every 2 s.
      await expect.poll(() => page.textContent(cell), { timeout: PAGE_DEADLINE_MS }).toMatch(/^1: unit 2 \(timeouts \(no answer within 500 ms\), probe (in \d+ (ms|s)|due)/);
    } finally {
      site.sim.simulator.clearFault(2);
    }
    // Its next probe is answered (cooldown.maxMs is 5 s in the rig): the unit is back.
    await expect.poll(() => page.textContent(cell), { timeout: PAGE_DEADLINE_MS }).toBe('-');
    await page.close();
    expect(pageErrors, JSON.stringify(pageErrors)).toEqual([]);
  });
});
