// Where a device's cloud identity comes from, in order: the site file, the credential store,
// interface A (certificate by device id, or create by device key), then the device-key endpoint.
// Fetched credentials are stored so the next start needs no API. Secrets are never logged.
import type { Logger } from '../../core/logger.js';
import type { CloudSettings, DeviceConfig, IdentityConfig } from '../../core/config/site-types.js';
import type { SecretValues } from '../../core/redact.js';
import type { CreateDeviceInput, DeviceCertificate } from '../http/project-api.js';
import type { CertificateByKeyInput, DeviceKeyCertificate } from '../http/device-api.js';
import type { CredentialSource, CredentialStore, StoredCredential } from './credential-store.js';
import { systemWallClock, type WallClock } from '../../core/time.js';

export { CredentialStore, CredentialFileError } from './credential-store.js';
export type { CredentialSource, StoredCredential } from './credential-store.js';

/** What the site file says about one device's cloud identity. */
export interface DeviceIdentity {
  /** Gateway-side device name: the key in the store. */
  name: string;
  deviceId?: string;
  accessToken?: string;
  projectKey?: string;
  deviceKey?: string;
  /** Type key for the device-key endpoint (lets the cloud auto-create the device). */
  typeKey?: string;
  /** Device type id for interface A creation. */
  typeId?: string;
  /** Create the device through interface A when it has no id yet. */
  createIfMissing?: boolean;
}

/** An identity as a site file block gives it (a device's `cloud`, or fieldgate's own `identity`). */
export function identityFrom(name: string, c: IdentityConfig | undefined, cloud: CloudSettings): DeviceIdentity {
  const fields = c ?? { allowCreate: false };
  return {
    // A block's own project key wins; otherwise the project's (the same for every device).
    name, deviceId: fields.deviceId, accessToken: fields.accessToken, projectKey: fields.projectKey ?? cloud.projectKey,
    deviceKey: fields.deviceKey, typeKey: fields.typeKey, createIfMissing: fields.allowCreate,
  };
}

/** A field device's identity as its site file entry gives it. */
export function deviceIdentity(device: DeviceConfig, cloud: CloudSettings): DeviceIdentity {
  return identityFrom(device.name, device.cloud, cloud);
}

export interface ResolvedCredential {
  deviceId: string;
  accessToken: string;
  projectKey: string;
  source: CredentialSource | 'stored';
}

/** Interface A as the resolver needs it (ProjectApiClient fits). */
export interface CertificateProvider {
  deviceCertificate(deviceId: string): Promise<DeviceCertificate>;
  createDevice(input: CreateDeviceInput): Promise<{ id: string; name: string }>;
}

/** The device-key endpoint (DeviceApiClient fits). */
export interface DeviceKeyProvider {
  certificateByDeviceKey(input: CertificateByKeyInput): Promise<DeviceKeyCertificate>;
}

export interface CredentialResolverOptions {
  store: CredentialStore;
  log: Logger;
  projectApi?: CertificateProvider;
  deviceKeyApi?: DeviceKeyProvider;
  /** Project key for the device-key endpoint when a device has none of its own. */
  projectKey?: string;
  /** Every credential handed out is added, so logs redact it wherever foreign text repeats it. */
  secrets?: SecretValues;
  /** The time stamps and expiry checks read; the system's by default. */
  /** Wall clock: the stored times are read by later processes. */
  clock?: WallClock;
}

export class CredentialUnavailableError extends Error {
  override readonly name = 'CredentialUnavailableError';
  constructor(readonly device: string, readonly attempts: string[]) {
    super(`no cloud credential for device "${device}": ${attempts.join('; ')}`);
  }
}

function reason(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class CredentialResolver {
  private readonly refusedSite = new Set<string>();
  private readonly inFlight = new Map<string, Promise<ResolvedCredential>>();
  private readonly clock: WallClock;

  constructor(private readonly options: CredentialResolverOptions) {
    this.clock = options.clock ?? systemWallClock;
  }

  /** The credential to connect with; concurrent calls for one device share one lookup. */
  resolve(identity: DeviceIdentity): Promise<ResolvedCredential> {
    let pending = this.inFlight.get(identity.name);
    if (!pending) {
      pending = this.lookup(identity).then((credential) => {
        this.options.secrets?.add(credential.accessToken, credential.projectKey);
        return credential;
      }).finally(() => this.inFlight.delete(identity.name));
      this.inFlight.set(identity.name, pending);
    }
    return pending;
  }

  /** The broker refused this device's credential: fetch a new one next time. */
  async invalidate(identity: DeviceIdentity): Promise<void> {
    const { store, log } = this.options;
    const stored = store.get(identity.name);
    // The site credential comes first, so while it is not refused it is the one in use.
    if (identity.accessToken !== undefined && identity.projectKey !== undefined && !this.refusedSite.has(identity.name)) {
      this.refusedSite.add(identity.name);
      log.warn({ device: identity.name }, 'site file credential refused; falling back to the credential store or the API');
      return;
    }
    if (stored && stored.invalidatedAt === undefined) {
      await store.set(identity.name, { ...stored, invalidatedAt: this.clock.wallNow() });
      log.warn({ device: identity.name, source: stored.source }, 'stored credential refused; it will be fetched again');
    }
  }

  private async lookup(identity: DeviceIdentity): Promise<ResolvedCredential> {
    const attempts: string[] = [];
    const site = this.fromSite(identity, attempts);
    if (site) return site;

    const stored = this.options.store.get(identity.name);
    if (stored && stored.invalidatedAt === undefined) {
      return { deviceId: stored.deviceId, accessToken: stored.accessToken, projectKey: stored.projectKey, source: 'stored' };
    }
    attempts.push(stored ? 'stored credential was refused' : 'nothing stored');

    const fromApi = await this.fromProjectApi(identity, stored?.deviceId, attempts);
    if (fromApi) return this.keep(identity, fromApi, 'api');
    const fromKey = await this.fromDeviceKey(identity, attempts);
    if (fromKey) return this.keep(identity, fromKey, 'device-key');
    throw new CredentialUnavailableError(identity.name, attempts);
  }

  private fromSite(identity: DeviceIdentity, attempts: string[]): ResolvedCredential | undefined {
    if (identity.accessToken === undefined || identity.projectKey === undefined) {
      attempts.push('site file has no access_token/project_key');
      return undefined;
    }
    if (this.refusedSite.has(identity.name)) {
      attempts.push('site file credential was refused');
      return undefined;
    }
    return {
      deviceId: identity.deviceId ?? identity.name,
      accessToken: identity.accessToken,
      projectKey: identity.projectKey,
      source: 'site',
    };
  }

  private async fromProjectApi(identity: DeviceIdentity, storedId: string | undefined, attempts: string[]) {
    const api = this.options.projectApi;
    if (!api) {
      attempts.push('interface A not configured');
      return undefined;
    }
    let deviceId = identity.deviceId ?? storedId;
    try {
      if (deviceId === undefined) {
        if (identity.deviceKey === undefined || !identity.createIfMissing) {
          attempts.push('interface A: no device id (and creation by device key not allowed)');
          return undefined;
        }
        const created = await api.createDevice({ name: identity.name, deviceKey: identity.deviceKey, type: identity.typeId });
        deviceId = created.id;
        this.options.log.info({ device: identity.name, deviceId }, 'cloud device created');
      }
      const certificate = await api.deviceCertificate(deviceId);
      return { deviceId: certificate.deviceId, accessToken: certificate.accessToken, projectKey: certificate.projectKey };
    } catch (err) {
      attempts.push(`interface A: ${reason(err)}`);
      return undefined;
    }
  }

  private async fromDeviceKey(identity: DeviceIdentity, attempts: string[]) {
    const api = this.options.deviceKeyApi;
    const projectKey = identity.projectKey ?? this.options.projectKey;
    if (!api || identity.deviceKey === undefined || projectKey === undefined) {
      attempts.push('device-key certificate not configured (needs device_key and project_key)');
      return undefined;
    }
    try {
      const certificate = await api.certificateByDeviceKey({ projectKey, deviceKey: identity.deviceKey, typeKey: identity.typeKey });
      return { deviceId: certificate.deviceId, accessToken: certificate.accessToken, projectKey };
    } catch (err) {
      attempts.push(`device-key certificate: ${reason(err)}`);
      return undefined;
    }
  }

  private async keep(
    identity: DeviceIdentity,
    credential: { deviceId: string; accessToken: string; projectKey: string },
    source: CredentialSource,
  ): Promise<ResolvedCredential> {
    const stored: StoredCredential = { ...credential, source, fetchedAt: this.clock.wallNow() };
    try {
      await this.options.store.set(identity.name, stored);
    } catch (err) {
      // Still usable now; only the next start will have to fetch it again.
      this.options.log.error({ device: identity.name, err }, 'credential could not be saved');
    }
    this.options.log.info({ device: identity.name, deviceId: credential.deviceId, source }, 'cloud credential obtained');
    return { ...credential, source };
  }
}
