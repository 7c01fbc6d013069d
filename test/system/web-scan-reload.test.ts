// Hostile: a scan from the page while a reload restarts the bus it scans. The scan ends with an
// answer (the units found, or where it stopped and why), the reload is applied, the page answers
// meanwhile, and a second scan runs on the restarted bus (no scan left "running").
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/main.js';
import type { GatewayHandle } from '../../src/ops/gateway-handle.js';
import { silentLogger } from '../../src/ops/log.js';
import { loadConfigWithDigest } from '../../src/ops/site-file.js';
import { freePort } from '../helpers/mosquitto.js';
import { startSite, type Site } from './harness.js';
import { meterEntry, PageClient, pageSiteText } from './web-rig.js';

describe('a scan during a reload', () => {
  let site: Site;
  let gateway: GatewayHandle;
  let page: PageClient;

  beforeAll(async () => {
    site = await startSite();
    const file = join(site.stateDir, 'site.yaml');
    writeFileSync(file, pageSiteText(site, await freePort(), [meterEntry('meter-1', 1, 'demo-meter-1-token')]));
    const { config, sha256 } = loadConfigWithDigest(file, {});
    gateway = await startGateway(config, { logger: silentLogger(), env: {}, siteFile: file, configSha256: sha256 });
    page = new PageClient(`http://127.0.0.1:${gateway.webPort}`);
    await page.session();
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await site?.close();
  });

  it('answers the scan, applies the reload, and scans again on the restarted bus', async () => {
    // Units 3..20 are silent: each costs the bus's 500 ms timeout, so the scan is still asking when the reload lands.
    const scan = page.post('/api/scan', { bus: 'plant', from: 1, to: 20 });
    const shown = (await (await fetch(`${page.base}/api/site`, { headers: page.headers() })).json()) as { text: string };
    // A new timeout restarts the bus.
    const applied = await page.post('/api/site/apply', { text: shown.text.replace('timeoutMs: 500', 'timeoutMs: 300') });
    const outcome = (await applied.json()) as { outcome: string; generation: number };
    expect(outcome).toMatchObject({ outcome: 'applied', generation: 2 });
    expect((await fetch(`${page.base}/api/status`, { headers: page.headers() })).status).toBe(200);
    const answer = await scan;
    const body = (await answer.json()) as { found?: Array<{ unit: number }>; error?: string };
    // Either every unit was asked (the old bus finished its scan), or it stopped and says where and why.
    if (answer.status === 200) expect(body.found?.map((f) => f.unit)).toContain(1);
    else expect(body.error).toMatch(/^scan stopped at unit \d+: /);
    const again = await page.post('/api/scan', { bus: 'plant', from: 1, to: 2 });
    expect(again.status).toBe(200);
    expect(((await again.json()) as { found: Array<{ unit: number }> }).found.map((f) => f.unit)).toEqual([1, 2]);
  }, 120_000);
});
