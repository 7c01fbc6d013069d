// What every answer of the page carries and every request must pass: security headers (a CSP
// without inline scripts), bounded bodies, same-origin POSTs, the session cookie's shape.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Redacted } from '../../core/config/site-redaction.js';

export const CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'",
  "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
].join('; ');

export const SESSION_COOKIE = 'fg_session';

export function securityHeaders(res: ServerResponse, https: boolean): void {
  res.setHeader('Content-Security-Policy', CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  res.setHeader('Permissions-Policy', 'camera=(), microphone=(), geolocation=()');
  if (https) res.setHeader('Strict-Transport-Security', 'max-age=31536000');
}

export function sessionCookie(id: string, https: boolean): string {
  return `${SESSION_COOKIE}=${id}; Path=/; HttpOnly; SameSite=Strict${https ? '; Secure' : ''}`;
}

export function clearedSessionCookie(https: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${https ? '; Secure' : ''}`;
}

export function cookieValue(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/**
 * Why a state-changing request is refused as cross-site, or undefined. Browsers send Origin on
 * POSTs and Sec-Fetch-Site on all requests; when present they must name this page.
 */
export function crossSiteProblem(req: IncomingMessage, https: boolean): string | undefined {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return `Sec-Fetch-Site is ${site}`;
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== `${https ? 'https' : 'http'}://${req.headers.host ?? ''}`) return 'Origin is not this page';
  return undefined;
}

/** Names a browser gives a page on this machine or through an ssh tunnel. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Why a request to a page without a password is refused, or undefined. Such a page trusts loopback
 * alone, and a web site that points its own name at 127.0.0.1 (DNS rebinding) reaches loopback too:
 * its requests carry that name as Host, a tunnel's or a local browser's carry a loopback name.
 */
export function foreignHostProblem(host: string | undefined): string | undefined {
  if (host === undefined || host === '') return 'no Host header';
  const name = host.toLowerCase().replace(/:\d*$/, '');
  if (LOOPBACK_HOSTS.has(name) || name.endsWith('.localhost')) return undefined;
  return 'Host is not a loopback name';
}

export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`request body larger than ${limit} bytes`);
  }
}

/** The body as text, refused (BodyTooLarge) as soon as it passes `limit`, by its header or its bytes. */
export function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limit) {
      reject(new BodyTooLarge(limit));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.pause();
        reject(new BodyTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The page's only way to answer with JSON: the body passed the site redaction (names, messages and values may quote the site file). */
export function sendJson(res: ServerResponse, status: number, body: Redacted<unknown>, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Aborted when the answer's connection closes before it was sent (the tab closed, the browser gave up). */
export function abortedOnClose(res: ServerResponse): AbortSignal {
  const asker = new AbortController();
  res.once('close', () => { if (!res.writableFinished) asker.abort(); });
  return asker.signal;
}
