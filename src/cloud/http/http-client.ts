// The only HTTP wrapper: JSON in/out, timeouts, a capped body, rate-limit headers, typed errors.
// URLs may carry a device credential (interface B), so errors and logs name the operation only,
// and text the server sends back is passed through `redact` (it may echo a key or token).
import { CloudHttpError, NetworkError, RateLimitedError } from './errors.js';
import { createNodeFetch, type FetchLike } from './node-fetch.js';
import type { SecretValues } from '../../core/redact.js';
import type { RateInfo } from './rate-queue.js';
import { systemWallClock, type WallClock } from '../../core/time.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface HttpRequest {
  method: HttpMethod;
  url: string;
  /** Secret-free label for errors, e.g. "GET /app/device/v1/<token>/attributes". */
  operation: string;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
  signal?: AbortSignal;
}

export interface JsonResponse {
  status: number;
  body: unknown;
  rate: RateInfo;
}

export interface HttpClientOptions {
  timeoutMs: number;
  /** Larger bodies are refused (a misbehaving server must not eat memory). */
  maxResponseBytes?: number;
  /** Used when a 429 has no usable Retry-After header. */
  defaultRetryAfterMs?: number;
  /** Every answer's X-RateLimit-* headers (wire to RateQueue.observe). */
  onRateInfo?: (info: RateInfo) => void;
  /** PEM of a private CA trusted for https URLs (gateway.cloud.caFile), besides the public roots. */
  ca?: string | Buffer;
  /**
   * Known secrets: credential headers sent (Authorization, Project-Key) are added, and foreign text
   * (error bodies) is redacted with them before it becomes an error message.
   */
  secrets?: SecretValues;
  /** Tests only; the default speaks node:http/node:https so `ca` works. */
  fetch?: FetchLike;
  /** Wall clock: a Retry-After given as an HTTP date is a time of day. */
  clock?: WallClock;
}

export interface JsonRequester {
  requestJson(request: HttpRequest): Promise<JsonResponse>;
}

function headerNumber(headers: Headers, name: string): number | undefined {
  const raw = headers.get(name);
  if (raw === null || raw.trim() === '') return undefined;
  const value = Number(raw);
  return Number.isFinite(value) ? value : undefined;
}

/**
 * X-RateLimit-Reset is a Unix timestamp (seconds or milliseconds): a time of day, turned into how
 * long the window still runs by the wall clock of the answer's arrival, so the queue waits on its
 * own monotonic clock.
 */
export function parseRateInfo(headers: Headers, wallNow: number): RateInfo {
  const info: RateInfo = {};
  const limit = headerNumber(headers, 'x-ratelimit-limit');
  const remaining = headerNumber(headers, 'x-ratelimit-remaining');
  const reset = headerNumber(headers, 'x-ratelimit-reset');
  if (limit !== undefined) info.limit = limit;
  if (remaining !== undefined) info.remaining = remaining;
  if (reset !== undefined) info.resetInMs = (reset < 1e12 ? reset * 1000 : reset) - wallNow;
  return info;
}

/** Retry-After: delta seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, Math.round(seconds * 1000));
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export class HttpClient implements JsonRequester {
  private readonly fetchImpl: FetchLike;
  private readonly clock: WallClock;

  constructor(private readonly options: HttpClientOptions) {
    this.fetchImpl = options.fetch ?? createNodeFetch(options.ca === undefined ? {} : { ca: options.ca });
    this.clock = options.clock ?? systemWallClock;
  }

  async requestJson(request: HttpRequest): Promise<JsonResponse> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
    const headers: Record<string, string> = { accept: 'application/json', ...request.headers };
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    this.rememberCredentials(headers);
    let response: Response;
    try {
      response = await this.fetchImpl(request.url, {
        method: request.method,
        headers,
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        signal,
      });
    } catch (err) {
      throw this.networkError(request, err, timeout);
    }
    const rate = parseRateInfo(response.headers, this.clock.wallNow());
    this.options.onRateInfo?.(rate);
    if (response.status === 429) {
      await response.body?.cancel().catch(() => undefined);
      const retryAfter = parseRetryAfter(response.headers.get('retry-after'), this.clock.wallNow());
      throw new RateLimitedError(retryAfter ?? this.options.defaultRetryAfterMs ?? 1000, request.operation);
    }
    let text: string;
    try {
      text = await this.readCapped(response, request.operation);
    } catch (err) {
      if (err instanceof CloudHttpError) throw err;
      throw this.networkError(request, err, timeout);
    }
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      throw new CloudHttpError(response.status, request.operation, 'response body is not JSON');
    }
    if (response.status < 200 || response.status > 299) {
      const message = messageOf(body);
      throw new CloudHttpError(response.status, request.operation, message === undefined ? undefined : this.redact(message));
    }
    return { status: response.status, body, rate };
  }

  private redact(text: string): string {
    return this.options.secrets ? this.options.secrets.redact(text) : text;
  }

  private rememberCredentials(headers: Record<string, string>): void {
    for (const [name, value] of Object.entries(headers)) {
      const lower = name.toLowerCase();
      if (lower === 'authorization') this.options.secrets?.add(value.replace(/^Bearer\s+/i, ''));
      else if (lower === 'project-key') this.options.secrets?.add(value);
    }
  }

  private async readCapped(response: Response, operation: string): Promise<string> {
    const cap = this.options.maxResponseBytes ?? 4 * 1024 * 1024;
    const declared = Number(response.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > cap) {
      await response.body?.cancel().catch(() => undefined);
      throw new CloudHttpError(response.status, operation, `response of ${declared} bytes exceeds the ${cap} byte limit`);
    }
    if (!response.body) return '';
    const chunks: Uint8Array[] = [];
    let size = 0;
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > cap) {
        await reader.cancel().catch(() => undefined);
        throw new CloudHttpError(response.status, operation, `response exceeds the ${cap} byte limit`);
      }
      chunks.push(value);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  private networkError(request: HttpRequest, err: unknown, timeout: AbortSignal): NetworkError {
    if (timeout.aborted) return new NetworkError(request.operation, `timed out after ${this.options.timeoutMs} ms`, { cause: err });
    if (request.signal?.aborted) return new NetworkError(request.operation, 'aborted', { cause: err });
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
    const code = typeof cause === 'object' && cause !== null && 'code' in cause ? String(cause.code) : undefined;
    const detail = code ?? this.redact(cause instanceof Error ? cause.message : String(cause));
    return new NetworkError(request.operation, detail, { cause: err });
  }
}

function messageOf(body: unknown): string | undefined {
  if (typeof body === 'object' && body !== null && 'message' in body && typeof body.message === 'string') {
    return body.message.slice(0, 200);
  }
  return undefined;
}
