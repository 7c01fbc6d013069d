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

/** Sessions kept at most; the least recently used goes first. */
export const MAX_SESSIONS = 256;
const LIMITER_ENTRIES = 1024;

export class SessionStore {
  // Map order is insertion order; a used session is moved to the end.
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly idleMs: number) {}

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
    while (this.sessions.size >= MAX_SESSIONS) {
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

/** Failed logins per client address in a sliding minute; over `perMinute`, logins are refused unchecked. */
export class LoginLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly perMinute: number) {}

  allowed(address: string, now: number): boolean {
    return this.recent(address, now).length < this.perMinute;
  }

  failed(address: string, now: number): void {
    const recent = this.recent(address, now);
    recent.push(now);
    this.failures.delete(address);
    while (this.failures.size >= LIMITER_ENTRIES) this.failures.delete(this.failures.keys().next().value as string);
    this.failures.set(address, recent);
  }

  /** Seconds until one more attempt is allowed. */
  retryAfterS(address: string, now: number): number {
    const recent = this.recent(address, now);
    return recent.length === 0 ? 0 : Math.max(1, Math.ceil((recent[0] + 60_000 - now) / 1000));
  }

  private recent(address: string, now: number): number[] {
    const list = (this.failures.get(address) ?? []).filter((at) => now - at < 60_000);
    if (list.length === 0) this.failures.delete(address);
    return list;
  }
}
