// `gateway.web`: the commissioning page's settings, the checks that span several keys, and the
// WebSettings made of them (absent while the page is off).
import type { ConfigIssue, WebSettings } from './site-types.js';

export type { WebSettings };

/** As convict returns it: unset strings are ''. */
export type RawWeb = Omit<WebSettings, 'passwordHash' | 'cert' | 'key'> & { passwordHash: string; cert: string; key: string };

export const LOOPBACK_ADDRESS = '127.0.0.1';
export const PASSWORD_HASH_ENV = 'FIELDGATE_WEB_PASSWORD_HASH';

/** `scrypt:N:r:p:salt:hash`, N a power of two, salt and hash base64url. */
const HASH_SHAPE = /^scrypt:(\d{1,8}):(\d{1,3}):(\d{1,3}):([A-Za-z0-9_-]{16,128}):([A-Za-z0-9_-]{32,256})$/;

export interface ScryptHash {
  n: number;
  r: number;
  p: number;
  salt: Buffer;
  hash: Buffer;
}

/** The parts of a stored password hash, or undefined when it is not one fieldgate wrote. */
export function parsePasswordHash(text: string): ScryptHash | undefined {
  const match = HASH_SHAPE.exec(text);
  if (!match) return undefined;
  const [n, r, p] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (n < 2 || (n & (n - 1)) !== 0 || r < 1 || p < 1) return undefined;
  return { n, r, p, salt: Buffer.from(match[4], 'base64url'), hash: Buffer.from(match[5], 'base64url') };
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

export function isListenAddress(value: unknown): boolean {
  return typeof value === 'string' && (IPV4.test(value) || (/^[0-9a-fA-F:]+$/.test(value) && value.includes(':')));
}

/** Connections beyond the event streams a set maxConnections must leave for page loads and API calls. */
const CONNECTIONS_BESIDE_STREAMS = 16;

/** The connection limit when the site file leaves it 0: the event streams, their reconnects and page loads. */
export function defaultMaxConnections(maxEventClients: number): number {
  return maxEventClients * 4 + 256;
}

/** What convict cannot check alone: a password off loopback, a well-formed hash, cert with key, limits that fit together. */
export function webIssues(web: RawWeb, healthPort: number | undefined): ConfigIssue[] {
  if (web.port === 0) return [];
  const issues: ConfigIssue[] = [];
  if (web.passwordHash === '' && web.address !== LOOPBACK_ADDRESS) {
    issues.push({ path: 'gateway.web.passwordHash', message: `is required when address is not ${LOOPBACK_ADDRESS} (set ${PASSWORD_HASH_ENV} with "fieldgate web passwd")` });
  }
  if (web.passwordHash !== '' && !parsePasswordHash(web.passwordHash)) {
    issues.push({ path: 'gateway.web.passwordHash', message: 'must be a hash written by "fieldgate web passwd" (scrypt:N:r:p:salt:hash)' });
  }
  if ((web.cert === '') !== (web.key === '')) {
    issues.push({ path: web.cert === '' ? 'gateway.web.cert' : 'gateway.web.key', message: 'cert and key are set together (both for HTTPS, neither for HTTP)' });
  }
  // Only between values that passed their own checks: one problem per key.
  const counts = (...values: unknown[]) => values.every((v) => Number.isInteger(v) && (v as number) >= 1);
  if (counts(web.loginFailuresPerMinuteTotal, web.loginFailuresPerMinute) && web.loginFailuresPerMinuteTotal < web.loginFailuresPerMinute) {
    issues.push({ path: 'gateway.web.loginFailuresPerMinuteTotal', message: `must be at least loginFailuresPerMinute (${web.loginFailuresPerMinute}): all addresses together get no fewer tries than one` });
  }
  if (counts(web.maxConnections, web.maxEventClients) && web.maxConnections < web.maxEventClients + CONNECTIONS_BESIDE_STREAMS) {
    issues.push({ path: 'gateway.web.maxConnections', message: `must be 0 (= 4 x maxEventClients + 256) or at least maxEventClients + ${CONNECTIONS_BESIDE_STREAMS} (${web.maxEventClients + CONNECTIONS_BESIDE_STREAMS}): the live pages' streams and their page loads` });
  }
  if (healthPort !== undefined && web.port === healthPort) {
    issues.push({ path: 'gateway.web.port', message: `must differ from gateway.health.port (${healthPort})` });
  }
  return issues;
}

export function webFrom(web: RawWeb): WebSettings | undefined {
  if (web.port === 0) return undefined;
  const { passwordHash, cert, key, maxConnections, ...rest } = web;
  return {
    ...rest, maxConnections: maxConnections === 0 ? defaultMaxConnections(web.maxEventClients) : maxConnections,
    ...(passwordHash ? { passwordHash } : {}), ...(cert ? { cert, key } : {}),
  };
}
