// Seed cross-checks for gateway sub-devices: every binding names a gateway device, and an
// address is unique among one gateway's sub-devices.
import type { SeedData } from './model.js';

export function checkBindings(seed: SeedData, problems: string[]): void {
  const kindOfType = new Map(seed.types.map((t) => [t.id, t.kind]));
  const kindOfDevice = new Map(seed.devices.map((d) => [d.id, kindOfType.get(d.type)]));
  const taken = new Map<string, string>();
  seed.devices.forEach((device, i) => {
    const binding = device.binding;
    if (binding === undefined) return;
    const at = `devices[${i}]`;
    if (kindOfDevice.get(device.id) !== 'sub_device') {
      problems.push(`${at}.gateway: only a device whose type is of kind sub_device can be bound to a gateway`);
    }
    if (!kindOfDevice.has(binding.gateway)) {
      problems.push(`${at}.gateway: unknown device "${binding.gateway}"`);
    } else if (kindOfDevice.get(binding.gateway) !== 'gateway') {
      problems.push(`${at}.gateway: device "${binding.gateway}" is not of a gateway type`);
    }
    const key = JSON.stringify([binding.gateway, binding.addr]);
    const holder = taken.get(key);
    if (holder !== undefined) {
      problems.push(`${at}.sub_device_addr: "${binding.addr}" is already used by ${holder} on gateway "${binding.gateway}"`);
    }
    taken.set(key, device.id);
  });
}
