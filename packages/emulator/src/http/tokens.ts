// Interface A access tokens: server exchange (1 day) and administrator login (7 days).
import { randomBytes } from 'node:crypto';
import type { CloudClock } from '../clock.js';
import { ApiError, ErrCode } from './errors.js';

export const EXCHANGE_TOKEN_TTL_S = 86_400;
export const ADMIN_TOKEN_TTL_S = 604_800;

export interface IssuedToken {
  token: string;
  kind: 'exchange' | 'admin';
  appId: string;
  /** Admin id for admin-login tokens. */
  adminId: string | undefined;
  expiresAt: number;
}

/** Expired tokens remembered (oldest forgotten first) so their use still says "expired". */
export const EXPIRED_TOKEN_MEMORY = 10_000;

export class TokenStore {
  private readonly tokens = new Map<string, IssuedToken>();
  /** Insertion-ordered: the first entry is the oldest expired token. */
  private readonly expired = new Set<string>();

  constructor(private readonly clock: CloudClock) {}

  issue(kind: IssuedToken['kind'], appId: string, adminId?: string): IssuedToken {
    this.dropExpired();
    const ttl = kind === 'admin' ? ADMIN_TOKEN_TTL_S : EXCHANGE_TOKEN_TTL_S;
    const issued: IssuedToken = {
      token: randomBytes(24).toString('hex'), kind, appId, adminId, expiresAt: this.clock.now() + ttl * 1000,
    };
    this.tokens.set(issued.token, issued);
    return issued;
  }

  /** The token behind an `Authorization` header value, or an ApiError (401). */
  verify(authorization: string | undefined): IssuedToken {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!match) throw new ApiError(ErrCode.invalidToken, 'Missing access token: send Authorization: Bearer <ACCESS_TOKEN>', [{ field: 'Authorization', message: 'is required' }]);
    const issued = this.tokens.get(match[1]);
    if (!issued && this.expired.has(match[1])) throw expiredError();
    if (!issued) throw new ApiError(ErrCode.invalidToken, 'Invalid access token', [{ field: 'Authorization', message: 'unknown token' }]);
    if (this.clock.now() >= issued.expiresAt) throw expiredError();
    return issued;
  }

  /** Drops the records of expired tokens, remembering only their values. */
  private dropExpired(): void {
    const now = this.clock.now();
    for (const [key, t] of this.tokens) {
      if (now < t.expiresAt) continue;
      this.tokens.delete(key);
      this.expired.add(key);
    }
    for (const key of this.expired) {
      if (this.expired.size <= EXPIRED_TOKEN_MEMORY) break;
      this.expired.delete(key);
    }
  }
}

function expiredError(): ApiError {
  return new ApiError(ErrCode.expiredToken, 'Access token expired', [{ field: 'Authorization', message: 'expired' }]);
}
