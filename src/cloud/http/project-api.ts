// Interface A client (project API): API token, device certificate, device creation.
// Every request goes through the shared rate queue; the token is fetched outside any queued task
// so a queue of concurrency 1 cannot deadlock on it.
import type { Logger } from '../../core/logger.js';
import { CloudApiError, CloudHttpError } from './errors.js';
import type { HttpMethod, JsonRequester } from './http-client.js';
import { systemClock, type Clock } from '../../core/time.js';
import { joinUrl, requireString, type CloudRequestQueue } from './api-common.js';

export interface DeviceCertificate {
  deviceId: string;
  name: string;
  accessToken: string;
  projectKey: string;
}

export interface ProjectApiClientOptions {
  baseUrl: string;
  appId: string;
  accessKey: string;
  secretKey: string;
  http: JsonRequester;
  queue: CloudRequestQueue;
  log: Logger;
  /** Refresh the token this long before it expires. */
  refreshMarginMs?: number;
  /**
   * Which `result:false` answers of an authenticated call mean "bad token" (one refresh + retry).
   * The cloud does not document the codes, so by default any refusal is tried once more.
   */
  tokenErrorCodes?: 'any' | readonly number[];
  /** Monotonic: the token's expiry; the system's by default. */
  clock?: Clock;
}

export interface CreateDeviceInput {
  name: string;
  deviceKey: string;
  type?: string;
  descr?: string;
}

interface CachedToken {
  value: string;
  expiresAt: number;
}

const DEFAULT_EXPIRES_S = 86_400;

/** `{result: true, info}` -> info; `{result: false, ...}` -> CloudApiError. */
export function unwrapProjectResult(body: unknown, operation: string): unknown {
  if (typeof body !== 'object' || body === null || !('result' in body)) {
    throw new CloudHttpError(200, operation, 'unexpected response body (no result field)');
  }
  const record = body as Record<string, unknown>;
  if (record.result === true || record.result === 1) return record.info;
  const errcode = typeof record.errcode === 'number' ? record.errcode : undefined;
  throw new CloudApiError(errcode, typeof record.message === 'string' ? record.message : '', operation);
}

function field(info: unknown, name: string): unknown {
  return typeof info === 'object' && info !== null ? (info as Record<string, unknown>)[name] : undefined;
}

export class ProjectApiClient {
  private token: CachedToken | undefined;
  private tokenRequest: Promise<CachedToken> | undefined;
  private readonly clock: Clock;

  constructor(private readonly options: ProjectApiClientOptions) {
    this.clock = options.clock ?? systemClock;
  }

  /** A valid API token: cached, refreshed before expiry, one request at a time. */
  async accessToken(): Promise<string> {
    const margin = this.options.refreshMarginMs ?? 10 * 60_000;
    if (this.token && this.clock.now() < this.token.expiresAt - margin) return this.token.value;
    this.tokenRequest ??= this.fetchToken().finally(() => {
      this.tokenRequest = undefined;
    });
    return (await this.tokenRequest).value;
  }

  async deviceCertificate(deviceId: string): Promise<DeviceCertificate> {
    const operation = 'GET /api/v1/device/<id>/certificate';
    const info = await this.authed<unknown>('GET', `/api/v1/device/${encodeURIComponent(deviceId)}/certificate`, operation);
    return {
      deviceId: requireString(field(info, 'id'), 'id', operation),
      name: typeof field(info, 'name') === 'string' ? (field(info, 'name') as string) : '',
      accessToken: requireString(field(info, 'access_token'), 'access_token', operation),
      projectKey: requireString(field(info, 'project_key'), 'project_key', operation),
    };
  }

  async createDevice(input: CreateDeviceInput): Promise<{ id: string; name: string }> {
    const operation = 'POST /api/v1/device';
    const body: Record<string, unknown> = { name: input.name, device_key: input.deviceKey };
    if (input.type !== undefined) body.type = input.type;
    if (input.descr !== undefined) body.descr = input.descr;
    const info = await this.authed<unknown>('POST', '/api/v1/device', operation, body);
    return { id: requireString(field(info, 'id'), 'id', operation), name: String(field(info, 'name') ?? input.name) };
  }

  private async fetchToken(): Promise<CachedToken> {
    const operation = 'POST /api/v1/access_token';
    const { appId, accessKey, secretKey } = this.options;
    const info = await this.options.queue.run({
      run: async (signal) => {
        const response = await this.options.http.requestJson({
          method: 'POST',
          url: joinUrl(this.options.baseUrl, '/api/v1/access_token'),
          operation,
          body: { app_id: appId, access_key: accessKey, secret_key: secretKey },
          signal,
        });
        return unwrapProjectResult(response.body, operation);
      },
    });
    const value = requireString(field(info, 'access_token'), 'access_token', operation);
    const expiresIn = field(info, 'expires_in');
    const seconds = typeof expiresIn === 'number' && expiresIn > 0 ? expiresIn : DEFAULT_EXPIRES_S;
    this.token = { value, expiresAt: this.clock.now() + seconds * 1000 };
    this.options.log.info({ expiresInS: seconds }, 'cloud API token obtained');
    return this.token;
  }

  private isTokenError(err: unknown): boolean {
    if (err instanceof CloudHttpError) return err.status === 401 || err.status === 403;
    if (!(err instanceof CloudApiError)) return false;
    const codes = this.options.tokenErrorCodes ?? 'any';
    return codes === 'any' || (err.errcode !== undefined && codes.includes(err.errcode));
  }

  private async authed<T>(method: HttpMethod, path: string, operation: string, body?: unknown): Promise<T> {
    const token = await this.accessToken();
    try {
      return await this.send<T>(token, method, path, operation, body);
    } catch (err) {
      if (!this.isTokenError(err)) throw err;
      // Drop the token unless someone already replaced it, then try exactly once more.
      if (this.token?.value === token) this.token = undefined;
      this.options.log.warn({ operation, err }, 'cloud API call refused; refreshing the token once');
      const fresh = await this.accessToken();
      return this.send<T>(fresh, method, path, operation, body);
    }
  }

  private send<T>(token: string, method: HttpMethod, path: string, operation: string, body?: unknown): Promise<T> {
    return this.options.queue.run({
      run: async (signal) => {
        const response = await this.options.http.requestJson({
          method,
          url: joinUrl(this.options.baseUrl, path),
          operation,
          headers: { authorization: `Bearer ${token}` },
          body,
          signal,
        });
        return unwrapProjectResult(response.body, operation) as T;
      },
    });
  }
}
