// The line page across a reload that restarts its bus: the live stream ends when the bus is
// replaced (the browser's EventSource comes back after the `retry` it was given) and the next
// stream shows the restarted bus's transactions; a bus a reload removes answers 404. Before,
// the page kept watching the old bus's capture and showed nothing more, without a sign.
import { writeFileSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/main.js';
import type { GatewayHandle } from '../../src/ops/gateway-handle.js';
import { loadConfigWithDigest } from '../../src/ops/site-file.js';
import { readSiteFile } from '../../src/ops/site-file-reader.js';
import { freePort } from '../helpers/mosquitto.js';
import { silentLogger } from '../../src/ops/log.js';
import { startSite, waitFor, type Site } from './harness.js';
import { meterEntry, PageClient, pageSiteText } from './web-rig.js';

interface LineStream { events: string[]; ended: Promise<void>; close(): void; status: number }

function openLine(page: PageClient, bus: string): Promise<LineStream> {
  return new Promise((resolve, reject) => {
    const req = request(`${page.base}/api/line?bus=${bus}`, { headers: page.headers() }, (res: IncomingMessage) => {
      const events: string[] = [];
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => events.push(chunk));
      const ended = new Promise<void>((done) => res.on('close', () => done()));
      resolve({ events, ended, close: () => req.destroy(), status: res.statusCode ?? 0 });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('line page across a reload', () => {
  let site: Site;
  let gateway: GatewayHandle | undefined;
  let file: string;
  let port: number;

  beforeEach(async () => {
    site = await startSite();
    port = await freePort();
    file = join(site.stateDir, 'site.yaml');
    writeFileSync(file, pageSiteText(site, port, [meterEntry('meter-1', 1, 'demo-meter-1-token')]));
    const { config, sha256 } = loadConfigWithDigest(file, {});
    gateway = await startGateway(config, { logger: silentLogger(), env: {}, siteFile: file, configSha256: sha256 });
  }, 60_000);

  afterEach(async () => {
    await gateway?.stop();
    gateway = undefined;
    await site?.close();
  });

  it('ends the stream when the bus restarts; the next one shows the new bus\'s frames; a removed bus is 404', async () => {
    const g = gateway!;
    const page = new PageClient(`http://127.0.0.1:${g.webPort}`);
    await page.session();
    const before = await openLine(page, 'plant');
    expect(before.status).toBe(200);
    await waitFor(() => (before.events.join('').includes('event: frame\n') ? true : undefined), 20_000);
    expect(before.events.join('')).toContain('retry: 1000');

    // A changed bus definition restarts the bus (and its capture).
    writeFileSync(file, pageSiteText(site, port, [meterEntry('meter-1', 1, 'demo-meter-1-token')]).replace('timeoutMs: 500', 'timeoutMs: 700'));
    const restarted = await g.reload(() => readSiteFile(file, {}));
    expect(restarted.outcome).toBe('applied');
    await before.ended;

    const after = await openLine(page, 'plant');
    expect(after.status).toBe(200);
    await waitFor(() => (after.events.join('').includes('event: frame\n') ? true : undefined), 20_000);
    after.close();

    // The bus renamed: the old name's line is no more.
    writeFileSync(file, pageSiteText(site, port, [meterEntry('meter-1', 1, 'demo-meter-1-token')]).replaceAll('plant', 'plant-2'));
    const removed = await g.reload(() => readSiteFile(file, {}));
    expect(removed.outcome).toBe('applied');
    const gone = await openLine(page, 'plant');
    expect(gone.status).toBe(404);
    gone.close();
    const renamed = await openLine(page, 'plant-2');
    expect(renamed.status).toBe(200);
    renamed.close();
  }, 90_000);
});
