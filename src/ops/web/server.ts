// The commissioning page (docs/web.md): node:http or node:https, no framework. Routes are exact
// matches; assets come from an in-memory map (nothing is read from disk per request), so no path
// reaches the file system. Every POST needs the session's CSRF token and a same-origin request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DeviceConfig } from '../../core/config/site-types.js';
import type { WebSettings } from '../../core/config/web-settings.js';
import type { PointValue } from '../../core/points/types.js';
import type { Logger } from '../log.js';
import type { GatewayStatus } from '../status.js';
import { ASSETS, SHELL_HTML } from './assets.js';
import { cloudValues, deviceView, overviewValues, type OverviewValue } from './device-view.js';
import { EventStreams } from './event-streams.js';
import { abortedOnClose, BodyTooLarge, clearedSessionCookie, cookieValue, crossSiteProblem, foreignHostProblem, readBody, securityHeaders, sendJson, SESSION_COOKIE, sessionCookie } from './http-guard.js';
import { SiteRedaction } from '../../core/config/site-redaction.js';
import type { LineCapture } from '../../field/modbus/line-capture.js';
import type { LiveFeed } from './live-feed.js';
import { SessionStore, type Session } from './sessions.js';
import { PageLogin } from './page-login.js';
import { createGuardedServer } from './guarded-server.js';
import type { SiteAnswer, SiteFileView } from './site-view.js';
import type { WebCommands } from './web-commands.js';
import type { DeviceAdding } from './device-adding.js';
import { systemTime, type Clock, type WallClock } from '../../core/time.js';

export interface WebSources {
  status(): GatewayStatus;
  devices(): readonly DeviceConfig[];
  latest(device: string): Readonly<Record<string, PointValue>>;
  feed?: LiveFeed;
  /** The read, poll and scan forms. */
  commands?: WebCommands;
  /** The site-file page; absent when the daemon was started without a file (tests). */
  site?: SiteFileView;
  /** The add-a-device flow (through the site-file page's Check and Apply); absent without a site file. */
  adding?: DeviceAdding;
  /** The cloud's stored attributes of a device (interface B); absent without a cloud side. */
  cloudAttributes?(device: DeviceConfig, keys: readonly string[]): Promise<Record<string, unknown>>;
  /** Per bus: its transactions, captured while the line page watches. */
  captures?: ReadonlyMap<string, LineCapture>;
  /** The redaction every answer passes: the running config's secrets and the process's (absent: URL credentials only). */
  redaction?(): SiteRedaction;
}

const URL_CREDENTIALS_ONLY = new SiteRedaction([]);

export interface WebServer {
  port: number;
  /** Open event streams (for tests and status). */
  eventClients(): number;
  close(): Promise<void>;
}

class WebHandler {
  readonly sessions: SessionStore;
  private readonly logins: PageLogin;
  readonly streams: EventStreams;
  private readonly https: boolean;
  private readonly foreignHostsLogged = new Set<string>();
  /** The event-stream bound was reached and logged; cleared when a stream opens again. */
  private streamsFull = false;

  constructor(private readonly settings: WebSettings, private readonly sources: WebSources, private readonly log: Logger, private readonly time: Clock & WallClock) {
    this.sessions = new SessionStore(settings.sessionIdleMs, settings.maxSessions);
    this.streams = new EventStreams(settings.maxEventClients, sources.feed, () => this.redaction().json(this.overview()), log, settings.statusPeriodMs, settings.maxBufferedBytes);
    this.https = settings.cert !== undefined;
    this.logins = new PageLogin(settings, this.sessions, log, time, this.https, this.send);
  }

  private redaction(): SiteRedaction {
    return this.sources.redaction?.() ?? URL_CREDENTIALS_ONLY;
  }

  /** Every JSON answer: through the running config's redaction (site answers were redacted with more already). */
  readonly send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    sendJson(res, status, this.redaction().json(body), headers);
  };

  /** The status as /status has it, with each device's latest values for the overview. */
  private overview(): GatewayStatus & { values: Record<string, OverviewValue[]> } {
    return { ...this.sources.status(), values: overviewValues(this.sources.devices(), (device) => this.lastRead(device)) };
  }

  /** The reporter's latest values, and while a device is offline the last ones read (shown as stale). */
  private lastRead(device: string): Readonly<Record<string, PointValue>> {
    return { ...this.sources.feed?.lastValues(device), ...this.sources.latest(device) };
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    securityHeaders(res, this.https);
    const foreignHost = this.settings.passwordHash === undefined ? foreignHostProblem(req.headers.host) : undefined;
    if (foreignHost !== undefined) return this.refuseForeignHost(req, res, foreignHost);
    const path = (req.url ?? '/').split('?')[0];
    const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
    if (req.method === 'POST') return this.post(req, res, path);
    if (req.method !== 'GET' && req.method !== 'HEAD') return this.send(res, 405, { error: 'method not allowed' }, { Allow: 'GET, HEAD, POST' });
    const asset = ASSETS.get(path);
    if (asset) {
      res.writeHead(200, { 'Content-Type': asset.type, 'Cache-Control': 'no-cache', 'Content-Length': asset.body.length });
      res.end(req.method === 'HEAD' ? undefined : asset.body);
      return;
    }
    if (path === '/favicon.ico') {
      res.writeHead(204, { 'Cache-Control': 'max-age=86400' });
      res.end();
      return;
    }
    if (path === '/' || path === '/login' || path === '/tools' || path === '/site' || path === '/add' || path === '/line' || /^\/device\/[^/]+$/.test(path)) {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Length': SHELL_HTML.length });
      res.end(req.method === 'HEAD' ? undefined : SHELL_HTML);
      return;
    }
    if (path === '/api/session') return this.sessionInfo(req, res);
    if (!path.startsWith('/api/')) return this.send(res, 404, { error: 'not found' });
    const session = this.session(req);
    if (!session?.authenticated) return this.send(res, 401, { error: 'login required' });
    if (path === '/api/status') return this.send(res, 200, this.overview());
    const deviceName = /^\/api\/device\/([^/]+)$/.exec(path)?.[1];
    if (deviceName !== undefined) return this.device(res, deviceName);
    const cloudOf = /^\/api\/device\/([^/]+)\/cloud$/.exec(path)?.[1];
    if (cloudOf !== undefined) return this.cloudView(res, cloudOf);
    if (path === '/api/events') return this.events(res, query.get('device') ?? undefined);
    if (path === '/api/line') return this.line(res, query.get('bus') ?? '');
    if (path === '/api/site' && this.sources.site) return this.answer(res, this.sources.site.show(session.id));
    if (path === '/api/site/device' && this.sources.adding) return this.send(res, 200, { profiles: this.sources.adding.choices(), cloud: this.sources.adding.hasCloud() });
    return this.send(res, 404, { error: 'not found' });
  }

  /** Logged once per Host name (a rebinding page retries; the log must not fill with it). */
  private refuseForeignHost(req: IncomingMessage, res: ServerResponse, problem: string): void {
    const host = String(req.headers.host ?? '').slice(0, 100);
    if (!this.foreignHostsLogged.has(host) && this.foreignHostsLogged.size < 16) {
      this.foreignHostsLogged.add(host);
      this.log.warn({ host, problem, client: req.socket.remoteAddress }, 'web request refused: page without password reached by a foreign name');
    }
    this.send(res, 421, { error: `${problem}: without a password the page answers only to localhost or 127.0.0.1 (docs/web.md)` });
  }

  private session(req: IncomingMessage): Session | undefined {
    return this.sessions.get(cookieValue(req, SESSION_COOKIE), this.time.now());
  }

  private sessionInfo(req: IncomingMessage, res: ServerResponse): void {
    let session = this.session(req);
    const headers: Record<string, string> = {};
    if (!session) {
      session = this.sessions.create(this.settings.passwordHash === undefined, this.time.now());
      headers['Set-Cookie'] = sessionCookie(session.id, this.https);
    }
    this.send(res, 200, {
      authenticated: session.authenticated, passwordRequired: this.settings.passwordHash !== undefined, csrf: session.csrf,
      allowWrites: this.settings.allowWrites, allowReload: this.settings.allowReload, lineFramesKept: this.settings.lineFramesKept,
    }, headers);
  }

  private findDevice(encoded: string): DeviceConfig | undefined {
    let name: string;
    try {
      name = decodeURIComponent(encoded);
    } catch {
      return undefined;
    }
    return this.sources.devices().find((d) => d.name === name);
  }

  private device(res: ServerResponse, encoded: string): void {
    const device = this.findDevice(encoded);
    if (!device) return this.send(res, 404, { error: 'no such device' });
    const status = this.sources.status().devices.find((d) => d.name === device.name);
    this.send(res, 200, deviceView(device, status, this.lastRead(device.name), this.sources.feed, this.time.wallNow()));
  }

  private async cloudView(res: ServerResponse, encoded: string): Promise<void> {
    const device = this.findDevice(encoded);
    if (!device) return this.send(res, 404, { error: 'no such device' });
    const answer = await cloudValues(device, this.sources.cloudAttributes, this.log);
    this.send(res, answer.status, answer.body);
  }

  private events(res: ServerResponse, device: string | undefined): void {
    if (device !== undefined && !this.sources.devices().some((d) => d.name === device)) return this.send(res, 404, { error: 'no such device' });
    if (this.streams.open(res, device)) this.streamsFull = false;
    else this.refuseStream(res);
  }

  /** Logged once each time the bound is reached, not once per refused client (a flood would fill the log). */
  private refuseStream(res: ServerResponse): void {
    if (!this.streamsFull) {
      this.streamsFull = true;
      this.log.warn({ limit: this.settings.maxEventClients }, 'event-stream client refused: limit reached');
    }
    // The connection goes too: a flood of refused clients must not hold sockets against the connection limit.
    this.send(res, 503, { error: `at most ${this.settings.maxEventClients} live pages at once` }, { 'Retry-After': '10', Connection: 'close' });
  }

  private line(res: ServerResponse, bus: string): void {
    const capture = this.sources.captures?.get(bus);
    if (!capture) return this.send(res, 404, { error: 'no such bus' });
    if (this.streams.openLine(res, capture)) this.streamsFull = false;
    else this.refuseStream(res);
  }

  private async post(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const crossSite = crossSiteProblem(req, this.https);
    if (crossSite) {
      this.log.warn({ path, reason: crossSite, remote: req.socket.remoteAddress }, 'cross-site POST refused');
      return this.send(res, 403, { error: 'cross-site request refused' });
    }
    const session = this.session(req);
    const token = req.headers['x-csrf-token'];
    if (!session || typeof token !== 'string' || token !== session.csrf) {
      this.log.warn({ path, remote: req.socket.remoteAddress, session: session !== undefined }, 'POST without a valid CSRF token refused');
      return this.send(res, 403, { error: 'missing or wrong CSRF token' });
    }
    if (!(req.headers['content-type'] ?? '').startsWith('application/json')) return this.send(res, 415, { error: 'body must be application/json' });
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req, this.settings.maxBodyBytes));
    } catch (err) {
      if (err instanceof BodyTooLarge) {
        this.log.warn({ path, limit: err.limit, remote: req.socket.remoteAddress }, 'request body too large refused');
        res.once('finish', () => req.destroy());
        return this.send(res, 413, { error: err.message }, { Connection: 'close' });
      }
      return this.send(res, 400, { error: 'body is not JSON' });
    }
    if (path === '/api/login') return this.logins.login(req, res, session, body);
    if (path === '/api/logout') {
      this.sessions.end(session.id);
      return this.send(res, 200, { authenticated: false }, { 'Set-Cookie': clearedSessionCookie(this.https) });
    }
    if (!session.authenticated) return this.send(res, 401, { error: 'login required' });
    if (path === '/api/site/check' || path === '/api/site/apply') return this.site(res, session, path, body);
    if (path.startsWith('/api/site/device/')) return this.addDevice(res, session, path, body);
    const commands = this.sources.commands;
    if (path === '/api/write' && !this.settings.allowWrites) return this.send(res, 403, { error: 'writing from the page is off (gateway.web.allowWrites)' });
    const form = path === '/api/write' ? commands?.write : path === '/api/read' ? commands?.read : path === '/api/poll' ? commands?.poll : path === '/api/scan' ? commands?.scan : undefined;
    if (!form || !commands) return this.send(res, 404, { error: 'not found' });
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return this.send(res, 400, { error: 'body must be a JSON object' });
    // A read or scan whose page went away stops, and leaves the bus queue (writes and polls finish).
    const outcome = await form.call(commands, body as Record<string, unknown>, abortedOnClose(res));
    return outcome.ok ? this.send(res, 200, outcome.result) : this.send(res, outcome.error.code >= 400 && outcome.error.code < 600 ? outcome.error.code : 500, { error: outcome.error.message });
  }

  private answer(res: ServerResponse, answer: SiteAnswer): void {
    if (answer.ok) this.send(res, 200, answer.body);
    else this.send(res, answer.status, { error: answer.error });
  }

  private async site(res: ServerResponse, session: Session, path: string, body: unknown): Promise<void> {
    const site = this.sources.site;
    if (!site) return this.send(res, 404, { error: 'the daemon runs without a site file' });
    const text = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).text : undefined;
    if (path === '/api/site/check') return this.answer(res, await site.check(session.id, text));
    if (!this.settings.allowReload) return this.send(res, 403, { error: 'applying a site file from the page is off (gateway.web.allowReload)' });
    return this.answer(res, await site.apply(session.id, text));
  }

  /** The add-a-device flow: the site-file page's own Check and Apply on the text it computes, and a unit's identification. */
  private async addDevice(res: ServerResponse, session: Session, path: string, body: unknown): Promise<void> {
    const { adding } = this.sources, action = path.slice('/api/site/device/'.length);
    if (!adding || !['check', 'apply', 'identify'].includes(action)) return this.send(res, 404, { error: adding ? 'not found' : 'the daemon runs without a site file' });
    if (action === 'apply' && !this.settings.allowReload) return this.send(res, 403, { error: 'applying a site file from the page is off (gateway.web.allowReload)' });
    if (action !== 'identify') return this.answer(res, await adding.add(session.id, body, action === 'apply'));
    return this.answer(res, await adding.identify(body, abortedOnClose(res)));
  }
}

export async function startWebServer(settings: WebSettings, sources: WebSources, log: Logger, time: Clock & WallClock = systemTime): Promise<WebServer> {
  const handler = new WebHandler(settings, sources, log, time);
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    handler.handle(req, res).catch((err: unknown) => {
      log.error({ err, path: req.url }, 'page request failed');
      if (!res.headersSent) handler.send(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  };
  const server = createGuardedServer(settings, listener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, settings.address, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => log.error({ err }, 'page server error'));
  return {
    port: (server.address() as AddressInfo).port,
    eventClients: () => handler.streams.size,
    close: () => new Promise((resolve) => {
      handler.streams.closeAll();
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
