// Interface B client (application-side device access) and the device-key certificate endpoint.
// Both authenticate with the project key header; B puts the device credential in the URL path.
import { CloudApiError, CloudHttpError } from './errors.js';
import type { JsonRequester } from './http-client.js';
import { joinUrl, requireString, type CloudRequestQueue } from './api-common.js';

export interface DeviceAccess {
  accessToken: string;
  projectKey: string;
}

export interface DeviceKeyCertificate {
  deviceId: string;
  name: string;
  accessToken: string;
  /** "3" means the device is a gateway. */
  connType?: string;
}

export interface CertificateByKeyInput {
  projectKey: string;
  deviceKey: string;
  typeKey?: string;
  customerId?: string;
}

export interface DeviceApiClientOptions {
  baseUrl: string;
  http: JsonRequester;
  queue: CloudRequestQueue;
}

/** `{result: 1, ...}` -> the body; `{result: 0, ...}` -> CloudApiError. */
export function unwrapDeviceResult(body: unknown, operation: string): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || !('result' in body)) {
    throw new CloudHttpError(200, operation, 'unexpected response body (no result field)');
  }
  const record = body as Record<string, unknown>;
  if (record.result === 1 || record.result === true) return record;
  const errcode = typeof record.errcode === 'number' ? record.errcode : undefined;
  throw new CloudApiError(errcode, typeof record.message === 'string' ? record.message : '', operation);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export class DeviceApiClient {
  constructor(private readonly options: DeviceApiClientOptions) {}

  /**
   * The cloud's current values of a device's attributes (all when keys is undefined).
   * Concurrent identical reads for one device share one request.
   */
  readAttributes(access: DeviceAccess, keys?: readonly string[]): Promise<Record<string, unknown>> {
    const operation = 'GET /app/device/v1/<token>/attributes';
    const sorted = keys === undefined ? undefined : [...new Set(keys)].sort();
    const query = sorted === undefined ? '' : `?keys=${sorted.map(encodeURIComponent).join(',')}`;
    const path = `/app/device/v1/${encodeURIComponent(access.accessToken)}/attributes${query}`;
    return this.options.queue.run({
      key: `attributes:${access.accessToken}:${sorted?.join(',') ?? '*'}`,
      run: async (signal) => {
        const response = await this.options.http.requestJson({
          method: 'GET',
          url: joinUrl(this.options.baseUrl, path),
          operation,
          headers: { 'project-key': access.projectKey },
          signal,
        });
        const body = unwrapDeviceResult(response.body, operation);
        if (body.attributes === undefined) return {};
        if (!isObject(body.attributes)) throw new CloudHttpError(200, operation, 'attributes is not an object');
        return body.attributes;
      },
    });
  }

  /** `POST /device/v1/certificate`: a device's credential by its device key (maybe creating it). */
  certificateByDeviceKey(input: CertificateByKeyInput): Promise<DeviceKeyCertificate> {
    const operation = 'POST /device/v1/certificate';
    const body: Record<string, unknown> = { device_key: input.deviceKey };
    if (input.typeKey !== undefined) body.type_key = input.typeKey;
    if (input.customerId !== undefined) body.customer_id = input.customerId;
    return this.options.queue.run({
      run: async (signal) => {
        const response = await this.options.http.requestJson({
          method: 'POST',
          url: joinUrl(this.options.baseUrl, '/device/v1/certificate'),
          operation,
          headers: { 'project-key': input.projectKey },
          body,
          signal,
        });
        const device = unwrapDeviceResult(response.body, operation).device;
        if (!isObject(device)) throw new CloudHttpError(200, operation, 'response has no device object');
        const certificate: DeviceKeyCertificate = {
          deviceId: requireString(device.id, 'device.id', operation),
          name: typeof device.name === 'string' ? device.name : '',
          accessToken: requireString(device.access_token, 'device.access_token', operation),
        };
        if (typeof device.conn_type === 'string') certificate.connType = device.conn_type;
        return certificate;
      },
    });
  }
}
