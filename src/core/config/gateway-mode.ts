// Which devices reach the cloud through fieldgate's identity (gateway mode), under which
// sub-device address, and what a site file gets wrong about it (pure). Used by the config check
// and, the same way, at start-up.
import type { CloudMode, CloudSettings, ConfigIssue, DeviceConfig, SiteConfig } from './site-types.js';

/** A device in gateway mode and its address among the identity's sub-devices. */
export interface SubDevice {
  device: DeviceConfig;
  address: string;
  /** Index in `site.devices` (issue paths). */
  index: number;
}

export function cloudModeOf(device: DeviceConfig, cloud: Pick<CloudSettings, 'mode'>): CloudMode | undefined {
  if (!device.cloud) return undefined;
  return device.cloud.mode ?? cloud.mode ?? 'direct';
}

/**
 * Devices in gateway mode with their addresses. Default address: the unit id ("4") when every
 * gateway-mode device is on one bus, else "<bus>/<unitId>" (unit ids repeat across buses).
 */
export function subDevicesOf(site: SiteConfig, cloud: Pick<CloudSettings, 'mode'>): SubDevice[] {
  const members = site.devices.map((device, index) => ({ device, index })).filter(({ device }) => cloudModeOf(device, cloud) === 'gateway');
  const oneBus = new Set(members.map(({ device }) => device.bus)).size <= 1;
  return members.map(({ device, index }) => ({
    device, index,
    address: device.cloud?.subDeviceAddress ?? (oneBus ? String(device.unitId) : `${device.bus}/${device.unitId}`),
  }));
}

function addressPath(sub: SubDevice): string {
  return sub.device.cloud?.subDeviceAddress !== undefined ? `devices[${sub.index}].cloud.subDeviceAddress` : `devices[${sub.index}].cloud`;
}

/** Gateway-mode problems: no identity, streams on a sub-device, an address used twice. */
export function checkGatewayMode(cloud: CloudSettings, site: SiteConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const subs = subDevicesOf(site, cloud);
  if (subs.length > 0 && !cloud.identity) {
    issues.push({ path: 'gateway.cloud.identity', message: `required: ${subs.length} device(s) reach the cloud in gateway mode` });
  }
  for (const sub of subs) {
    if (sub.device.streams.length > 0) {
      issues.push({ path: `devices[${sub.index}].streams`, message: 'custom data streams stay per device: a device with streams needs cloud.mode: direct' });
    }
  }
  const byAddress = new Map<string, SubDevice[]>();
  for (const sub of subs) byAddress.set(sub.address, [...(byAddress.get(sub.address) ?? []), sub]);
  for (const [address, users] of byAddress) {
    if (users.length < 2) continue;
    for (const sub of users) {
      const others = users.filter((u) => u !== sub).map((u) => `devices[${u.index}] (${u.device.name})`).join(', ');
      issues.push({ path: addressPath(sub), message: `sub-device address "${address}" is also used by ${others}: set cloud.subDeviceAddress` });
    }
  }
  return issues;
}
