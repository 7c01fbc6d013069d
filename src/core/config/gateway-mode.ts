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

/** The address of a device that sets none and announced none: the same whatever else the site holds. */
export function defaultSubDeviceAddress(device: Pick<DeviceConfig, 'bus' | 'unitId'>): string {
  return `${device.bus}/${device.unitId}`;
}

function gatewayMembers(site: SiteConfig, cloud: Pick<CloudSettings, 'mode'>): Array<{ device: DeviceConfig; index: number }> {
  return site.devices.map((device, index) => ({ device, index })).filter(({ device }) => cloudModeOf(device, cloud) === 'gateway');
}

/**
 * Devices in gateway mode with their addresses: the explicit `subDeviceAddress`, else the one the
 * state directory announced before (`site.announcedAddresses`), else "<bus>/<unitId>".
 */
export function subDevicesOf(site: SiteConfig, cloud: Pick<CloudSettings, 'mode'>): SubDevice[] {
  const announced = site.announcedAddresses ?? {};
  return gatewayMembers(site, cloud).map(({ device, index }) => ({
    device, index,
    address: device.cloud?.subDeviceAddress ?? (Object.hasOwn(announced, device.name) ? announced[device.name] : defaultSubDeviceAddress(device)),
  }));
}

/**
 * The rule of versions before the address record: the unit id while every gateway-mode device is
 * on one bus, else "<bus>/<unitId>". Only for a state directory such a version ran on.
 */
export function legacySubDeviceAddresses(site: SiteConfig, cloud: Pick<CloudSettings, 'mode'>): Map<string, string> {
  const members = gatewayMembers(site, cloud);
  const oneBus = new Set(members.map(({ device }) => device.bus)).size <= 1;
  return new Map(members.map(({ device }) => [device.name, device.cloud?.subDeviceAddress ?? (oneBus ? String(device.unitId) : defaultSubDeviceAddress(device))]));
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
