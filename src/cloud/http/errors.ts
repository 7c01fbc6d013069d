// Typed errors of the cloud HTTP clients and their queue. Messages name the operation, never a secret.

/** Non-2xx HTTP answer (other than 429). `operation` is like "GET /api/v1/device/<id>/certificate". */
export class CloudHttpError extends Error {
  override readonly name = 'CloudHttpError';
  constructor(readonly status: number, readonly operation: string, detail?: string) {
    super(`${operation} failed with HTTP ${status}${detail ? `: ${detail}` : ''}`);
  }
}

/** HTTP 200 with `result: false` (interface A) or `result: 0` (interface B). */
export class CloudApiError extends Error {
  override readonly name = 'CloudApiError';
  constructor(readonly errcode: number | undefined, readonly apiMessage: string, readonly operation: string) {
    super(`${operation} refused by the cloud${errcode === undefined ? '' : ` (errcode ${errcode})`}: ${apiMessage || 'no message'}`);
  }
}

/** HTTP 429; `retryAfterMs` from Retry-After (or a default when the header is missing). */
export class RateLimitedError extends Error {
  override readonly name = 'RateLimitedError';
  constructor(readonly retryAfterMs: number, readonly operation: string) {
    super(`${operation} rate limited; retry after ${retryAfterMs} ms`);
  }
}

/** Connection refused, reset, DNS failure, timeout, or a body that could not be read. */
export class NetworkError extends Error {
  override readonly name = 'NetworkError';
  constructor(readonly operation: string, detail: string, options?: { cause?: unknown }) {
    super(`${operation} failed: ${detail}`, options);
  }
}

export class QueueClosedError extends Error {
  override readonly name = 'QueueClosedError';
  constructor() {
    super('cloud request queue is closed (shutting down)');
  }
}

/** Worth another attempt after a backoff: server errors and network trouble only. */
export function isRetryable(err: unknown): boolean {
  return err instanceof NetworkError || (err instanceof CloudHttpError && err.status >= 500);
}
