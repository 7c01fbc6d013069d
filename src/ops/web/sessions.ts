// The page's sessions and the login limiter. A session is a random id in an HttpOnly,
// SameSite=Strict cookie, with its own CSRF token; it expires when unused for `idleMs`. Both
// tables are bounded and expire lazily on use: no timer runs for them.
import { randomBytes } from 'node:crypto';

export interface Session {
  id: string;
  csrf: string;
  authenticated: boolean;
  lastUsed: number;
}

const LIMITER_ENTRIES = 1024;
const MINUTE_MS = 60_000;

export class SessionStore {
  // Map order is insertion order; a used session is moved to the end.
  private readonly sessions = new Map<string, Session>();

  /** `maxSessions`: kept at most (gateway.web.maxSessions); the least recently used goes first. */
  constructor(private readonly idleMs: number, readonly maxSessions: number) {}

  get(id: string | undefined, now: number): Session | undefined {
    if (id === undefined) return undefined;
    const session = this.sessions.get(id);
    if (!session) return undefined;
    this.sessions.delete(id);
    if (now - session.lastUsed > this.idleMs) return undefined;
    session.lastUsed = now;
    this.sessions.set(id, session);
    return session;
  }

  create(authenticated: boolean, now: number): Session {
    // A flood of anonymous visits evicts anonymous sessions, never a logged-in one while any is left.
    while (this.sessions.size >= this.maxSessions) {
      const anonymous = [...this.sessions.values()].find((s) => !s.authenticated);
      this.sessions.delete(anonymous?.id ?? (this.sessions.keys().next().value as string));
    }
    const session = { id: randomBytes(32).toString('base64url'), csrf: randomBytes(32).toString('base64url'), authenticated, lastUsed: now };
    this.sessions.set(session.id, session);
    return session;
  }

  end(id: string): void {
    this.sessions.delete(id);
  }
}

/**
 * Failed logins in a sliding minute, per client address (`perMinute`) and from all addresses
 * together (`totalPerMinute`, so many addresses cannot guess together); over either, logins are
 * refused unchecked. The total is kept as timestamps, at most `totalPerMinute` of them.
 */
export class LoginLimiter {
  private readonly failures = new Map<string, number[]>();
  private all: number[] = [];

  constructor(private readonly perMinute: number, private readonly totalPerMinute: number) {}

  allowed(address: string, now: number): boolean {
    return this.recent(address, now).length < this.perMinute && this.recentAll(now).length < this.totalPerMinute;
  }

  /** Whether the refusal (if any) comes from the cap over all addresses (logged as such). */
  globalCapReached(now: number): boolean {
    return this.recentAll(now).length >= this.totalPerMinute;
  }

  failed(address: string, now: number): void {
    const recent = this.recent(address, now);
    recent.push(now);
    this.failures.delete(address);
    while (this.failures.size >= LIMITER_ENTRIES) this.failures.delete(this.failures.keys().next().value as string);
    this.failures.set(address, recent);
    const all = this.recentAll(now);
    all.push(now);
    if (all.length > this.totalPerMinute) all.splice(0, all.length - this.totalPerMinute);
  }

  /** Seconds until one more attempt from `address` is allowed (0: now). */
  retryAfterS(address: string, now: number): number {
    const waits: number[] = [];
    const recent = this.recent(address, now);
    if (recent.length >= this.perMinute) waits.push(recent[recent.length - this.perMinute]);
    const all = this.recentAll(now);
    if (all.length >= this.totalPerMinute) waits.push(all[all.length - this.totalPerMinute]);
    if (waits.length === 0) return 0;
    return Math.max(1, Math.ceil((Math.max(...waits) + MINUTE_MS - now) / 1000));
  }

  private recent(address: string, now: number): number[] {
    const list = (this.failures.get(address) ?? []).filter((at) => now - at < MINUTE_MS);
    if (list.length === 0) this.failures.delete(address);
    return list;
  }

  private recentAll(now: number): number[] {
    let drop = 0;
    while (drop < this.all.length && now - this.all[drop] >= MINUTE_MS) drop++;
    if (drop > 0) this.all = this.all.slice(drop);
    return this.all;
  }
}
