// Builds fieldgate's own identity session from the site: which DeviceSessions run without a link
// of their own (gateway mode) and reach the cloud through it.
import { identityFrom, type CredentialResolver, type DeviceIdentity } from '../cloud/credentials/credentials.js';
import type { Pacer } from '../cloud/forwarding/forwarder.js';
import type { ReportOutbox } from '../core/outbox-types.js';
import { subDevicesOf } from '../core/config/gateway-mode.js';
import type { CloudSettings, SiteConfig } from '../core/config/site-types.js';
import type { Logger } from '../core/logger.js';
import type { DeviceSession } from './device-session.js';
import { GatewaySession, type PresenceSource } from './gateway-session.js';

/** The identity's name in logs and the credential store: "@" is never part of a device name. */
export const IDENTITY_NAME = '@fieldgate';

function identityOf(cloud: CloudSettings): DeviceIdentity | undefined {
  return cloud.identity ? identityFrom(IDENTITY_NAME, cloud.identity, cloud) : undefined;
}

export interface GatewayWiringOptions {
  site: SiteConfig;
  cloud: CloudSettings & { mqttUrl: string };
  /** Every device's session; those in gateway mode are fed by the identity's link. */
  sessions: ReadonlyMap<string, DeviceSession>;
  resolver: CredentialResolver;
  outbox: ReportOutbox;
  presence: PresenceSource;
  pacer: Pacer;
  ca: Buffer | undefined;
  log: Logger;
}

/** The identity's session (undefined without an identity) and the names of the sub-devices it carries. */
export function createGatewaySession(options: GatewayWiringOptions): { session: GatewaySession | undefined; subDevices: ReadonlySet<string> } {
  const identity = identityOf(options.cloud);
  if (!identity) return { session: undefined, subDevices: new Set() };
  const subDevices = subDevicesOf(options.site, options.cloud).flatMap(({ device, address }) => {
    const session = options.sessions.get(device.name);
    if (!session) return [];
    return [{
      name: device.name, address,
      accept: session.accept.bind(session),
      onLinkUp: (reconnect: boolean) => void session.sync(reconnect ? 'reconnect' : 'start'),
    }];
  });
  const session = new GatewaySession({
    identity, settings: options.cloud, resolver: options.resolver, outbox: options.outbox, presence: options.presence,
    subDevices, pacer: options.pacer, ca: options.ca, logger: options.log,
  });
  return { session, subDevices: new Set(subDevices.map((s) => s.name)) };
}
