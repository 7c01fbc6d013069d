// The page's login (docs/web.md): the password checked against its scrypt hash, one check at a
// time, attempts counted before their check and limited per address and over all addresses
// (monotonic clock), a new session id at login.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebSettings } from '../../core/config/web-settings.js';
import type { Clock } from '../../core/time.js';
import type { Logger } from '../log.js';
import { sessionCookie } from './http-guard.js';
import { verifyPassword } from './password.js';
import { isLoopbackClient, LoginLimiter, type Session, type SessionStore } from './sessions.js';

/**
 * Runs tasks one at a time, loopback clients' first: each password check is a 16 MiB scrypt on
 * libuv's pool, which the file system and the RTU line's silences share; a burst of logins must
 * not hold it (40 at once held it 13 s) nor make the engineer's tunnel wait behind strangers.
 */
export class OneAtATime {
  private running = false;
  private readonly waiting: Array<{ first: boolean; start: () => void }> = [];

  get queued(): number {
    return this.waiting.length;
  }

  run<T>(first: boolean, task: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const start = () => {
        this.running = true;
        task().then(resolve, reject).finally(() => {
          this.running = false;
          this.waiting.shift()?.start();
        });
      };
      if (!this.running) start();
      else if (first) this.waiting.splice(this.waiting.filter((w) => w.first).length, 0, { first, start });
      else this.waiting.push({ first, start });
    });
  }
}

export class PageLogin {
  private readonly limiter: LoginLimiter;
  private readonly checks = new OneAtATime();
  private loginCapLoggedAt = -Infinity;

  constructor(private readonly settings: WebSettings, private readonly sessions: SessionStore, private readonly log: Logger, private readonly time: Clock, private readonly https: boolean, private readonly send: (res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>) => void) {
    this.limiter = new LoginLimiter(settings.loginFailuresPerMinute, settings.loginFailuresPerMinuteTotal);
  }

  /** Once per minute at most when the cap over all addresses refuses logins (a spread guess must not fill the log). */
  private logLoginCap(remote: string, now: number): void {
    if (!this.limiter.globalCapReached(now) || now - this.loginCapLoggedAt < 60_000) return;
    this.loginCapLoggedAt = now;
    this.log.warn({ remote, limit: this.settings.loginFailuresPerMinuteTotal }, 'page logins refused: failed logins from all addresses reached the limit');
  }

  async login(req: IncomingMessage, res: ServerResponse, session: Session, body: unknown): Promise<void> {
    const hash = this.settings.passwordHash;
    if (hash === undefined) return this.send(res, 200, { authenticated: true, csrf: session.csrf });
    const remote = req.socket.remoteAddress ?? 'unknown';
    const now = this.time.now();
    // Counted before the check: a burst sent at once is held like one sent in turn.
    if (!this.limiter.attempt(remote, now)) {
      this.logLoginCap(remote, now);
      return this.send(res, 429, { error: 'too many failed logins; try again later' }, { 'Retry-After': String(this.limiter.retryAfterS(remote, now)) });
    }
    const password = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).password : undefined;
    const right = typeof password === 'string' && password.length <= 1024 && await this.checks.run(isLoopbackClient(remote), () => verifyPassword(password, hash));
    if (!right) {
      this.log.warn({ remote }, 'page login failed');
      return this.send(res, 401, { error: 'wrong password' });
    }
    this.limiter.succeeded(remote, now);
    // A new session id at login: an id known before it (fixation) is worth nothing after.
    this.sessions.end(session.id);
    const fresh = this.sessions.create(true, this.time.now());
    this.log.info({ remote }, 'page login');
    this.send(res, 200, { authenticated: true, csrf: fresh.csrf }, { 'Set-Cookie': sessionCookie(fresh.id, this.https) });
  }
}
