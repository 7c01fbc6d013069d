// Sub-device addresses never change behind the integrator's back (pure). A device keeps the address
// it was announced under (recorded in the state directory, or the running config's at a reload)
// until the site file writes another one out; a site where keeping it would clash with another
// device is refused, naming both devices and addresses.
import type { Config } from './config.js';
import { defaultSubDeviceAddress, subDevicesOf, type SubDevice } from './gateway-mode.js';
import type { ConfigIssue } from './site-types.js';

export type AddressSource = 'explicit' | 'announced' | 'default';

/** Every gateway-mode device's address, by device name. */
export function subDeviceAddressesOf(config: Pick<Config, 'site' | 'gateway'>): Map<string, string> {
  return new Map(subDevicesOf(config.site, config.gateway.cloud).map((s) => [s.device.name, s.address]));
}

function who(sub: SubDevice): string {
  return `devices[${sub.index}] (${sub.device.name})`;
}

function how(sub: SubDevice, source: AddressSource): string {
  if (source === 'explicit') return `${who(sub)} sets it in cloud.subDeviceAddress`;
  if (source === 'announced') return `${who(sub)} was announced under it (state directory)`;
  return `${who(sub)} has it by default`;
}

export interface PinnedAddresses {
  /** `config` with the announced addresses its devices keep; undefined when refused. */
  config: Config | undefined;
  issues: ConfigIssue[];
  /** Devices whose explicit address replaces the one they were announced under. */
  changed: Array<{ device: string; from: string; to: string }>;
}

/**
 * `config` with each gateway-mode device that sets no address keeping the one in `announced`
 * (device name -> address). Refused when a kept address is also another device's.
 */
export function pinSubDeviceAddresses(config: Config, announced: ReadonlyMap<string, string>): PinnedAddresses {
  const kept: Record<string, string> = {};
  const changed: PinnedAddresses['changed'] = [];
  for (const sub of subDevicesOf({ buses: config.site.buses, devices: config.site.devices }, config.gateway.cloud)) {
    const before = announced.get(sub.device.name);
    if (before === undefined) continue;
    const explicit = sub.device.cloud?.subDeviceAddress;
    if (explicit === undefined) kept[sub.device.name] = before;
    else if (explicit !== before) changed.push({ device: sub.device.name, from: before, to: explicit });
  }
  const site = Object.freeze({ ...config.site, announcedAddresses: Object.freeze(kept) });
  const pinned: Config = Object.freeze({ ...config, site });
  const issues = clashes(pinned, kept);
  return { config: issues.length > 0 ? undefined : pinned, issues, changed };
}

/** At a reload: the next config keeps every address the running one uses. */
export function keepRunningAddresses(next: Config, running: Config): PinnedAddresses {
  return pinSubDeviceAddresses(next, subDeviceAddressesOf(running));
}

/** Two devices on one address where one of them keeps an announced address (the site file alone was checked before). */
function clashes(config: Config, kept: Readonly<Record<string, string>>): ConfigIssue[] {
  const subs = subDevicesOf(config.site, config.gateway.cloud);
  const source = (sub: SubDevice): AddressSource => (sub.device.cloud?.subDeviceAddress !== undefined ? 'explicit' : Object.hasOwn(kept, sub.device.name) ? 'announced' : 'default');
  const byAddress = new Map<string, SubDevice[]>();
  for (const sub of subs) byAddress.set(sub.address, [...(byAddress.get(sub.address) ?? []), sub]);
  const issues: ConfigIssue[] = [];
  for (const [address, users] of byAddress) {
    if (users.length < 2) continue;
    const keeper = users.find((u) => source(u) === 'announced');
    if (!keeper) continue;
    for (const sub of users) {
      const others = users.filter((u) => u !== sub);
      const path = source(sub) === 'explicit' ? `devices[${sub.index}].cloud.subDeviceAddress` : `devices[${sub.index}].cloud`;
      const message = sub === keeper
        ? `keeps the sub-device address "${address}" it was announced under (state directory) rather than move to "${defaultSubDeviceAddress(sub.device)}" unasked, but ${others.map((u) => how(u, source(u))).join(' and ')}`
        : `sub-device address "${address}" is the one ${who(keeper)} was announced under (state directory), which it keeps rather than move to "${defaultSubDeviceAddress(keeper.device)}" unasked`;
      issues.push({ path, message: `${message}: give one of them another cloud.subDeviceAddress` });
    }
  }
  return issues;
}
