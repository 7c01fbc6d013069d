// Wiring of fieldgate's own device (composition only): its channel over the identity's link, the
// buses and pollers it reads through, and the root logger whose level it may change for a while.
import type { MqttLink } from '../../cloud/link.js';
import { MqttSelfChannel } from '../../cloud/self-channel.js';
import { DEFAULT_SELF_IDENTITY } from '../../core/config/self-identity.js';
import type { Config } from '../../core/config/config.js';
import type { BusConfig } from '../../core/config/site-types.js';
import type { Time } from '../../core/time.js';
import type { Poller } from '../../device/poller.js';
import type { Bus } from '../../field/modbus/bus.js';
import type { Logger } from '../../core/logger.js';
import type { GatewayStatus } from '../status.js';
import type { RemoteReadBus } from './commands.js';
import { rootLevelControl } from './log-level.js';
import { SelfDevice, selfSettings } from './self-device.js';

/** What the own device uses of the running gateway. */
export interface GatewayParts {
  readonly buses: ReadonlyMap<string, Bus>;
  readonly pollers: ReadonlyMap<string, Poller>;
  readonly kinds: ReadonlyMap<string, BusConfig['kind']>;
  status(): GatewayStatus;
}

/** fieldgate's own device over its identity's link: own attributes, and the commands of ops/self. */
export function createSelfDevice(link: MqttLink, config: Config, gateway: GatewayParts, root: Logger, time: Time): SelfDevice {
  const { cloud } = config.gateway;
  const log = root.child({ component: 'self' });
  const kinds = gateway.kinds;
  const buses = new Map([...gateway.buses].map(([name, bus]) => [name, {
    kind: kinds.get(name) ?? 'rtu', read: bus.read.bind(bus),
  } satisfies RemoteReadBus]));
  const pollerOf = new Map(config.site.devices.map((d) => [d.name, gateway.pollers.get(d.bus)]));
  return new SelfDevice({
    channel: new MqttSelfChannel(link, { maxInboundBytes: cloud.maxInboundBytes, maxKeys: cloud.inbound.maxKeys }, log),
    settings: selfSettings(cloud.identity, DEFAULT_SELF_IDENTITY), status: gateway.status, rss: () => process.memoryUsage.rss(),
    buses, devices: config.site.devices.map((d) => d.name),
    pollDevice: (device) => pollerOf.get(device)?.pollNow(device) ?? Promise.reject(new Error(`device "${device}" has no poller`)),
    level: rootLevelControl(root), time, log,
  });
}
