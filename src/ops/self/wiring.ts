// Wiring of fieldgate's own device (composition only): its channel over the identity's link, the
// buses and pollers it reads through, and the root logger whose level it may change for a while.
import type { MqttLink } from '../../cloud/mqtt/link.js';
import { MqttSelfChannel } from '../../cloud/mqtt/self-channel.js';
import { DEFAULT_SELF_IDENTITY } from '../../core/config/self-identity.js';
import type { Config } from '../../core/config/config.js';
import type { BusConfig } from '../../core/config/site-types.js';
import type { TimeWithWall } from '../../core/time.js';
import type { Poller } from '../../device/poller.js';
import type { Bus } from '../../field/modbus/bus.js';
import type { Logger } from '../../core/logger.js';
import type { Sample } from '../../device/poll-cycle.js';
import type { GatewayStatus } from '../status.js';
import type { RemoteReadBus, SiteCommands } from './commands.js';
import { rootLevelControl } from './log-level.js';
import { SelfDevice, selfSettings } from './self-device.js';

/** What the own device uses of the running gateway. */
export interface GatewayParts {
  readonly buses: ReadonlyMap<string, Bus>;
  readonly pollers: ReadonlyMap<string, Poller>;
  readonly kinds: ReadonlyMap<string, BusConfig['kind']>;
  status(): GatewayStatus;
}

/** The buses and devices a commissioning read or poll may name, kept current across reloads. */
export interface RemoteReadParts {
  buses: ReadonlyMap<string, RemoteReadBus>;
  devices: readonly string[];
  pollDevice(device: string): Promise<Sample>;
}

/**
 * Reads through the running buses (their scheduler, at the cloud's priority) and polls through
 * their pollers, for the own device's commands and the commissioning page.
 * `onReload`: subscribes to applied reloads, after which the new buses and devices are known.
 */
export function remoteReadParts(config: Config, gateway: Omit<GatewayParts, 'status'>, onReload?: (listener: (next: Config) => void) => void): RemoteReadParts {
  // Filled in place, so a reload changes what the commands see without rebuilding them.
  const buses = new Map<string, RemoteReadBus>();
  const devices: string[] = [];
  const busOf = new Map<string, string>();
  const refresh = (current: Config) => {
    buses.clear();
    for (const [name, bus] of gateway.buses) buses.set(name, { kind: gateway.kinds.get(name) ?? 'rtu', read: bus.read.bind(bus) });
    devices.splice(0, devices.length, ...current.site.devices.map((d) => d.name));
    busOf.clear();
    for (const d of current.site.devices) busOf.set(d.name, d.bus);
  };
  refresh(config);
  onReload?.(refresh);
  const pollerOf = (device: string) => gateway.pollers.get(busOf.get(device) ?? '');
  return {
    buses, devices,
    pollDevice: (device) => pollerOf(device)?.pollNow(device) ?? Promise.reject(new Error(`device "${device}" has no poller`)),
  };
}

/**
 * fieldgate's own device over its identity's link: own attributes, and the commands of ops/self.
 * `onReload`: subscribes to applied reloads, after which the commands know the new buses and devices.
 */
export function createSelfDevice(
  link: MqttLink, config: Config, gateway: GatewayParts, root: Logger, time: TimeWithWall, onReload?: (listener: (next: Config) => void) => void, site?: SiteCommands,
): SelfDevice {
  const { cloud } = config.gateway;
  const log = root.child({ component: 'self' });
  const { buses, devices, pollDevice } = remoteReadParts(config, gateway, onReload);
  return new SelfDevice({
    channel: new MqttSelfChannel(link, { maxInboundBytes: cloud.maxInboundBytes, maxKeys: cloud.inbound.maxKeys }, log),
    settings: selfSettings(cloud.identity, DEFAULT_SELF_IDENTITY), status: gateway.status, rss: () => process.memoryUsage.rss(),
    buses, devices, pollDevice,
    level: rootLevelControl(root), time, log, ...(site ? { site } : {}),
  });
}
