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

/** The addresses a local browser or an ssh tunnel's forwarding uses: strangers on the LAN never have them. */
export function isLoopbackClient(address: string): boolean {
  return address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1';
}

/**
 * Login attempts in a sliding minute, counted before their password is checked (a burst sent at
 * once is held like one sent in turn), per client address (`perMinute`) and from all addresses
 * together (`totalPerMinute`, so many addresses cannot guess together); over either, logins are
 * refused unchecked. A successful attempt is taken back out. The loopback clients
 * (isLoopbackClient) have only their own limit: strangers on the LAN holding the total cannot
 * lock out the engineer's tunnel. The total is kept as timestamps, at most `totalPerMinute`.
 */
export class LoginLimiter {
  private readonly attempts = new Map<string, number[]>();
  private all: number[] = [];

  constructor(private readonly perMinute: number, private readonly totalPerMinute: number) {}

  /** Whether an attempt from `address` would be checked now. */
  allowed(address: string, now: number): boolean {
    return this.recent(address, now).length < this.perMinute && (isLoopbackClient(address) || this.recentAll(now).length < this.totalPerMinute);
  }

  /** Counts an attempt from `address` and says whether it may be checked (false: refused unchecked, not counted). */
  attempt(address: string, now: number): boolean {
    if (!this.allowed(address, now)) return false;
    const recent = this.recent(address, now);
    const loopback = isLoopbackClient(address);
    recent.push(now);
    this.attempts.delete(address);
    while (this.attempts.size >= LIMITER_ENTRIES) this.attempts.delete(this.attempts.keys().next().value as string);
    this.attempts.set(address, recent);
    if (!loopback) this.all.push(now);
    return true;
  }

  /** The attempt counted at `at` let the password in: it no longer counts. */
  succeeded(address: string, at: number): void {
    const recent = this.attempts.get(address);
    const index = recent?.lastIndexOf(at) ?? -1;
    if (recent && index >= 0) recent.splice(index, 1);
    if (isLoopbackClient(address)) return;
    const inAll = this.all.lastIndexOf(at);
    if (inAll >= 0) this.all.splice(inAll, 1);
  }

  /** Whether the refusal (if any) comes from the cap over all addresses (logged as such). */
  globalCapReached(now: number): boolean {
    return this.recentAll(now).length >= this.totalPerMinute;
  }

  /** Seconds until one more attempt from `address` is allowed (0: now). */
  retryAfterS(address: string, now: number): number {
    const waits: number[] = [];
    const recent = this.recent(address, now);
    if (recent.length >= this.perMinute) waits.push(recent[recent.length - this.perMinute]);
    const all = this.recentAll(now);
    if (!isLoopbackClient(address) && all.length >= this.totalPerMinute) waits.push(all[all.length - this.totalPerMinute]);
    if (waits.length === 0) return 0;
    return Math.max(1, Math.ceil((Math.max(...waits) + MINUTE_MS - now) / 1000));
  }

  private recent(address: string, now: number): number[] {
    const list = (this.attempts.get(address) ?? []).filter((at) => now - at < MINUTE_MS);
    if (list.length === 0) this.attempts.delete(address);
    return list;
  }

  private recentAll(now: number): number[] {
    let drop = 0;
    while (drop < this.all.length && now - this.all[drop] >= MINUTE_MS) drop++;
    if (drop > 0) this.all = this.all.slice(drop);
    if (this.all.length > this.totalPerMinute) this.all = this.all.slice(-this.totalPerMinute);
    return this.all;
  }
}
