// The daemon with its commissioning page on, against the simulator and the emulator (harness.ts),
// and Debian's Chromium driven by playwright-core (no browser download).
import { existsSync } from 'node:fs';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { chromium, type Browser } from 'playwright-core';
import type { Config } from '../../src/core/config/config.js';
import { defaultMaxConnections, type WebSettings } from '../../src/core/config/web-settings.js';
import { CHROMIUM, MissingPeerError } from '../helpers/peers.js';
import { PROJECT_KEY, type Site } from './harness.js';

export { CHROMIUM };
/** Generous: the box runs several suites at once; the page is checked for what it shows, not how fast. */
export const PAGE_DEADLINE_MS = 20_000;

/** Headless, without the sandbox (the tests run as root). */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new MissingPeerError(`${CHROMIUM} not found (or set FIELDGATE_CHROMIUM)`, 'chromium');
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}

export const WEB_DEFAULTS: Omit<WebSettings, 'port'> = {
  address: '127.0.0.1', allowWrites: false, allowReload: false, maxEventClients: 20, historySamples: 180,
  sessionIdleMs: 3_600_000, maxBodyBytes: 1_048_576, loginFailuresPerMinute: 5, loginFailuresPerMinuteTotal: 30,
  statusPeriodMs: 2000, maxBufferedBytes: 262_144, maxSessions: 256, lineFramesKept: 400, maxScanUnits: 32, maxConnections: defaultMaxConnections(20),
};

/** A site's config with the page on an ephemeral port (0 is only valid here, past validation); the connection limit follows maxEventClients unless given. */
export function withWeb(config: Config, web: Partial<WebSettings> = {}): Config {
  const maxConnections = web.maxConnections ?? defaultMaxConnections(web.maxEventClients ?? WEB_DEFAULTS.maxEventClients);
  return { ...config, gateway: { ...config.gateway, web: { ...WEB_DEFAULTS, port: 0, maxConnections, ...web } } };
}

/** A page client: keeps the session cookie and the CSRF token like a browser would. */
export class PageClient {
  cookie = '';
  csrf = '';

  constructor(readonly base: string) {}

  async session(): Promise<Record<string, unknown>> {
    const res = await fetch(`${this.base}/api/session`, { headers: this.headers() });
    const cookie = res.headers.get('set-cookie');
    if (cookie) this.cookie = cookie.split(';')[0];
    const body = (await res.json()) as Record<string, unknown>;
    this.csrf = String(body.csrf);
    return body;
  }

  /** Logs in; the session (and its CSRF token) is a new one after. */
  async login(password: string): Promise<Response> {
    const res = await this.post('/api/login', { password });
    if (res.ok) this.csrf = String(((await res.clone().json()) as Record<string, unknown>).csrf);
    return res;
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { ...(this.cookie ? { Cookie: this.cookie } : {}), ...extra };
  }

  async post(path: string, body: unknown, extra: Record<string, string> = {}): Promise<Response> {
    const res = await fetch(`${this.base}${path}`, {
      method: 'POST', body: JSON.stringify(body),
      headers: this.headers({ 'Content-Type': 'application/json', 'X-CSRF-Token': this.csrf, ...extra }),
    });
    const cookie = res.headers.get('set-cookie');
    if (cookie) this.cookie = cookie.split(';')[0];
    return res;
  }
}

export interface Answer { status: number; headers: Record<string, string | string[] | undefined>; body: string }

/** The request `send` makes (node:http or node:https, with its own options), sent with `body`, and its whole answer. */
export function answerOf(send: (onAnswer: (res: IncomingMessage) => void) => ClientRequest, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = send((res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A meter's entry in a site file (the simulator's input 0 as voltage). */
export function meterEntry(name: string, unit: number, token: string, pollMs = 500): string {
  return [
    `  - name: ${name}`, '    bus: plant', `    unitId: ${unit}`, `    pollIntervalMs: ${pollMs}`,
    `    cloud: { accessToken: ${token} }`,
    '    points:', '      - { id: voltage, table: input, address: 0, scale: 0.1, unit: V }',
  ].join('\n');
}

/** A site file for the page's site-file tests: the page on `webPort` with reloads allowed, the site's cloud and simulator. */
export function pageSiteText(site: Site, webPort: number, devices: string[], logLevel = 'silent'): string {
  return [
    'gateway:', `  stateDir: ${site.stateDir}`, `  logLevel: ${logLevel}`, '  health: { enabled: false }',
    `  web: { port: ${webPort}, allowReload: true }`,
    '  cloud:', `    mqttUrl: mqtt://127.0.0.1:${site.emulator.mqttPort}`, `    apiBaseUrl: http://127.0.0.1:${site.emulator.httpPort}`, `    projectKey: ${PROJECT_KEY}`, '    syncPeriodMs: 0',
    'buses:', `  - { name: plant, kind: tcp, host: 127.0.0.1, port: ${site.sim.tcp?.port ?? 0}, timeoutMs: 500 }`,
    'devices:', ...devices, '',
  ].join('\n');
}
