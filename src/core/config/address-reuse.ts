// An address the cloud bound to one device never silently passes to another (pure). The cloud keys
// a sub-device's values by its address: a device renamed (or removed, and another added) that took
// the old device's address by default would report under the old device's binding. Refused unless
// the new device writes the address out, which makes it a deliberate re-assignment.
import type { Config } from './config.js';
import { subDevicesOf } from './gateway-mode.js';
import type { ConfigIssue } from './site-types.js';

/** The device last announced under an address, and (once no device uses it) when it was last used. */
export interface AddressHolder {
  device: string;
  lastUsedAt?: string;
}

export interface AddressReuse {
  issues: ConfigIssue[];
  /** Devices taking, by an explicit `subDeviceAddress`, an address another device was announced under. */
  reassigned: Array<{ device: string; address: string; from: string }>;
}

/** Address -> its holder: the devices announced now (device -> address), else the released addresses. */
export function addressHolders(announced: ReadonlyMap<string, string>, released: ReadonlyMap<string, AddressHolder>): Map<string, AddressHolder> {
  const holders = new Map(released);
  for (const [device, address] of announced) holders.set(address, { device });
  return holders;
}

/**
 * Gateway-mode devices of `config` (its addresses already pinned) on an address `holders` gives to
 * another device. A holder still in `config` on that same address is a clash the pinning reports.
 */
export function checkAddressReuse(config: Config, holders: ReadonlyMap<string, AddressHolder>): AddressReuse {
  const subs = subDevicesOf(config.site, config.gateway.cloud);
  const addressOf = new Map(subs.map((s) => [s.device.name, s.address]));
  const issues: ConfigIssue[] = [];
  const reassigned: AddressReuse['reassigned'] = [];
  for (const sub of subs) {
    const holder = holders.get(sub.address);
    if (!holder || holder.device === sub.device.name || addressOf.get(holder.device) === sub.address) continue;
    if (sub.device.cloud?.subDeviceAddress !== undefined) {
      reassigned.push({ device: sub.device.name, address: sub.address, from: holder.device });
      continue;
    }
    const when = holder.lastUsedAt === undefined ? '' : `, last used ${holder.lastUsedAt}`;
    issues.push({
      path: `devices[${sub.index}].cloud`,
      message: `devices[${sub.index}] (${sub.device.name}) would take the sub-device address "${sub.address}" that device "${holder.device}" was announced under (state directory${when}), so its reports would go to "${holder.device}"'s cloud binding: write cloud.subDeviceAddress: "${sub.address}" out to re-assign it, or give it another`,
    });
  }
  return { issues, reassigned };
}
