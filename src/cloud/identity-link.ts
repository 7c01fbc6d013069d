// The MQTT link of fieldgate's own cloud identity (gateway.cloud.identity): its credential comes
// through the same resolver as a device's, and is fetched again after the broker refuses it.
import type { CloudSettings, IdentityConfig } from '../core/config/site-types.js';
import type { Time } from '../core/time.js';
import type { Logger } from '../ops/log.js';
import type { CredentialResolver, DeviceIdentity } from './credentials.js';
import { MqttLink } from './link.js';

/** The identity's key in the credential store: "@" is not allowed in device names, so no device shares it. */
export const OWN_IDENTITY_NAME = '@fieldgate';

export function ownIdentity(identity: IdentityConfig, cloud: CloudSettings): DeviceIdentity {
  return {
    name: OWN_IDENTITY_NAME, deviceId: identity.deviceId, accessToken: identity.accessToken, projectKey: identity.projectKey ?? cloud.projectKey,
    deviceKey: identity.deviceKey, typeKey: identity.typeKey, createIfMissing: identity.allowCreate,
  };
}

export interface IdentityLinkOptions {
  identity: IdentityConfig;
  settings: CloudSettings & { mqttUrl: string };
  resolver: CredentialResolver;
  ca: Buffer | undefined;
  log: Logger;
  time: Time;
}

export function createIdentityLink(options: IdentityLinkOptions): MqttLink {
  const { settings, resolver, log } = options;
  const identity = ownIdentity(options.identity, settings);
  const link = new MqttLink({
    name: OWN_IDENTITY_NAME,
    url: settings.mqttUrl,
    credentials: async () => {
      const credential = await resolver.resolve(identity);
      return { clientId: credential.deviceId, username: credential.accessToken, password: credential.projectKey };
    },
    streams: [],
    keepaliveS: settings.keepaliveS,
    connectTimeoutMs: settings.connectTimeoutMs,
    reconnect: settings.reconnect,
    ...(options.ca ? { ca: options.ca } : {}),
    log,
    time: options.time,
  });
  link.onEvent((event) => {
    if (event.type !== 'auth-refused') return;
    void resolver.invalidate(identity).catch((err: unknown) => log.warn({ device: OWN_IDENTITY_NAME, err }, 'credential invalidation failed'));
  });
  return link;
}
