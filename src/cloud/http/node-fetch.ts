// fetch-shaped requests over node:http / node:https. Node 20's fetch has no public way to trust a
// private CA (only NODE_EXTRA_CA_CERTS for the whole process); node:https takes `ca` per agent, so
// `gateway.cloud.caFile` applies to interfaces A and B as it does to MQTT.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { rootCertificates } from 'node:tls';

export interface FetchInit {
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

/** The part of fetch the HTTP client uses; the global fetch fits it too. */
export type FetchLike = (url: string, init: FetchInit) => Promise<Response>;

export interface NodeFetchOptions {
  /** PEM of a CA to trust in addition to the public roots (a private cloud's CA). */
  ca?: string | Buffer;
}

/** Statuses whose answer has no body (a Response refuses one). */
const NO_BODY = new Set([101, 204, 205, 304]);

function headersOf(message: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(message.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return headers;
}

function toResponse(message: IncomingMessage, method: string): Response {
  const status = message.statusCode ?? 0;
  const empty = NO_BODY.has(status) || method === 'HEAD';
  if (empty) message.resume();
  const body = empty ? null : (Readable.toWeb(message) as ReadableStream<Uint8Array>);
  return new Response(body, { status, statusText: message.statusMessage ?? '', headers: headersOf(message) });
}

/** Redirects are refused (like fetch with `redirect: 'error'`): a credential in a URL must not follow one. */
export class RedirectRefusedError extends Error {
  override readonly name = 'RedirectRefusedError';
  readonly code = 'REDIRECT_REFUSED';
}

export function createNodeFetch(options: NodeFetchOptions = {}): FetchLike {
  const httpAgent = new HttpAgent({ keepAlive: true });
  // `ca` replaces Node's roots, so the public roots are passed along with the private CA.
  const ca = options.ca === undefined ? undefined : [...rootCertificates, options.ca.toString()];
  const httpsAgent = new HttpsAgent({ keepAlive: true, ...(ca ? { ca } : {}) });
  return (url, init) => new Promise<Response>((resolve, reject) => {
    const target = new URL(url);
    const secure = target.protocol === 'https:';
    if (!secure && target.protocol !== 'http:') {
      reject(new TypeError(`unsupported protocol ${target.protocol}`));
      return;
    }
    const headers = { ...init.headers };
    if (init.body !== undefined) headers['content-length'] = String(Buffer.byteLength(init.body));
    const send = secure ? httpsRequest : httpRequest;
    const request = send(target, { method: init.method, headers, agent: secure ? httpsAgent : httpAgent, signal: init.signal }, (message) => {
      const status = message.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        message.destroy();
        reject(new RedirectRefusedError(`redirect (${status}) refused`));
        return;
      }
      try {
        resolve(toResponse(message, init.method));
      } catch (err) {
        message.destroy();
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
    request.on('error', reject);
    request.end(init.body);
  });
}
