// Applying an accepted reload plan (core/config/site-diff.ts) to the running parts, in an order
// that loses nothing: devices leaving stop polling first (no new reports), then their cloud side
// hands over (what is in flight acknowledged; a replaced device's queue stays for its successor,
// a removed one's is sent or dropped and counted: removed-devices.ts), then buses
// close and open, then new and replaced devices start. Devices the plan keeps are never touched.
// A plan that fails part-way is rolled back: every part it touched is stopped, whichever version
// of it runs, and the running config's version started again, so a reload applies whole or not at all.
import type { Config } from '../core/config/config.js';
import type { CompiledDevice } from '../core/config/compile.js';
import type { ReloadPlan } from '../core/config/site-diff.js';
import type { LogLevel, SiteConfig } from '../core/config/site-types.js';
import type { CommandService } from '../device/commands.js';
import type { Reporter } from '../device/reporter.js';
import type { CloudSide } from './cloud-side.js';
import type { Logger } from './log.js';
import { retireDevice, type RetiringParts } from './removed-devices.js';
import { createCommandService, type Southbound } from './southbound.js';

export interface ReloadParts {
  southbound: Southbound;
  cloudSide: CloudSide;
  reporter: Reporter;
  /** Every running device's command path, updated in place. */
  commands: Map<string, CommandService>;
  commandLog: Logger;
  /** How long a leaving device's link may take to get its in-flight reports acknowledged. */
  settleMs: number;
  setLogLevel(level: LogLevel): void;
  /** A removed device's queued reports: sent while its link is up (up to drainMs), the rest dropped and counted. */
  retiring: RetiringParts;
}

/**
 * Every step run to its end, then the first failure thrown: a rollback never starts while a step
 * of the same phase still runs (Promise.all would reject while the others go on).
 */
async function allOf(steps: ReadonlyArray<Promise<unknown>>): Promise<void> {
  const failed = (await Promise.allSettled(steps)).find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/** Devices that stop: removed, replaced, or on a bus that is removed or restarts. */
function leaving(plan: ReloadPlan, running: Config): Array<{ name: string; bus: string; replaced: boolean; keepsLink: boolean }> {
  const replaced = new Set(plan.devicesReplaced);
  const removed = new Set(plan.devicesRemoved);
  const keeping = new Set(plan.devicesKeepingLink);
  return running.site.devices.filter((d) => replaced.has(d.name) || removed.has(d.name))
    .map((d) => ({ name: d.name, bus: d.bus, replaced: replaced.has(d.name), keepsLink: keeping.has(d.name) }));
}

export async function applyReloadPlan(plan: ReloadPlan, running: Config, next: Config, parts: ReloadParts): Promise<void> {
  const { southbound, cloudSide, reporter, commands } = parts;
  const gone = leaving(plan, running);
  // A replaced device that keeps its identity keeps its link: its inbound messages are held from
  // the start, while its polling stops, and wait for the replacement.
  await allOf(gone.flatMap((d) => [southbound.removeDevice(d.name, d.bus), ...(d.keepsLink ? [cloudSide.suspendDevice(d.name, parts.settleMs)] : [])]));
  await allOf(gone.map((d) => retireDevice(d.name, d.replaced, parts.retiring, async () => {
    if (!d.keepsLink) await cloudSide.removeDevice(d.name, parts.settleMs, d.replaced);
    // A replacement keeps the device's write order; a device that leaves the site drops it.
    if (!d.replaced) southbound.writeOrder.forget(d.name);
    commands.delete(d.name);
    reporter.removeDevice(d.name);
  })));
  await allOf([...plan.busesRemoved, ...plan.busesRestarted].map((name) => southbound.removeBus(name)));
  for (const name of [...plan.busesAdded, ...plan.busesRestarted]) {
    const bus = next.site.buses.find((b) => b.name === name);
    if (bus) southbound.addBus(bus, next.site);
  }
  const starting = new Set([...plan.devicesAdded, ...plan.devicesReplaced]);
  const keepingLink = new Set(plan.devicesKeepingLink);
  for (const device of next.compiled.devices) {
    if (starting.has(device.config.name)) startDevice(device, next.site, keepingLink.has(device.config.name), parts);
  }
  if (plan.logLevel !== undefined) parts.setLogLevel(plan.logLevel);
}

/** A device (re)joins: reported, polled, its command path, and its cloud side (new, or the kept session resumed). */
function startDevice(device: CompiledDevice, site: SiteConfig, keepsLink: boolean, parts: ReloadParts): void {
  const { southbound, cloudSide, reporter, commands } = parts;
  reporter.addDevice(device.config);
  southbound.addDevice(device);
  const service = createCommandService(device, southbound, parts.commandLog);
  if (service) commands.set(device.config.name, service);
  if (keepsLink) cloudSide.resumeDevice(device.config, service);
  else cloudSide.addDevice(device.config, service, site);
}

/**
 * Undoes a plan that failed part-way, whatever step it reached: every device and bus it touches
 * is stopped (the old version or the new one, whichever runs), then the running config's
 * versions start again. A replaced device that keeps its link keeps it here too (its session is
 * held, then resumed with the old definition). Reports in flight stay in the outbox. Each part is
 * restored even when another fails; then the first failure is thrown (with how many there were).
 */
export async function rollBackReloadPlan(plan: ReloadPlan, running: Config, next: Config, parts: ReloadParts): Promise<void> {
  const { southbound, cloudSide, reporter, commands } = parts;
  const keepingLink = new Set(plan.devicesKeepingLink);
  const added = new Set(plan.devicesAdded);
  const touched = [...new Set([...plan.devicesRemoved, ...plan.devicesReplaced, ...plan.devicesAdded])];
  const busesOf = (name: string) => new Set([running, next].flatMap((c) => c.site.devices.filter((d) => d.name === name).map((d) => d.bus)));
  const failures: unknown[] = [];
  const attempt = async (step: () => unknown): Promise<void> => {
    try {
      await step();
    } catch (err) {
      failures.push(err);
    }
  };
  await Promise.all(touched.map(async (name) => {
    await Promise.all([...busesOf(name)].map((bus) => attempt(() => southbound.removeDevice(name, bus))));
    // An added device will not come back: announced offline; an old one is restored at once.
    await attempt(() => (keepingLink.has(name) ? cloudSide.suspendDevice(name, 0) : cloudSide.removeDevice(name, 0, !added.has(name))));
    commands.delete(name);
    reporter.removeDevice(name);
  }));
  await Promise.all([...plan.busesAdded, ...plan.busesRemoved, ...plan.busesRestarted].map((name) => attempt(() => southbound.removeBus(name))));
  const restoring = new Set([...plan.busesRemoved, ...plan.busesRestarted]);
  for (const bus of running.site.buses) if (restoring.has(bus.name)) await attempt(() => southbound.addBus(bus, running.site));
  const restarting = new Set([...plan.devicesRemoved, ...plan.devicesReplaced]);
  for (const device of running.compiled.devices) {
    if (restarting.has(device.config.name)) await attempt(() => startDevice(device, running.site, keepingLink.has(device.config.name), parts));
  }
  if (plan.logLevel !== undefined) parts.setLogLevel(running.gateway.logLevel);
  if (failures.length === 0) return;
  const first = failures[0] instanceof Error ? failures[0].message : String(failures[0]);
  throw new Error(failures.length === 1 ? first : `${first} (and ${failures.length - 1} more)`, { cause: failures[0] });
}
