// Applying an accepted reload plan (core/config/site-diff.ts) to the running parts, in an order
// that loses nothing: devices leaving stop polling first (no new reports), then their cloud side
// hands over (what is in flight acknowledged; a replaced device's queue stays for its successor,
// a removed one's is sent or dropped and counted: removed-devices.ts), then buses
// close and open, then new and replaced devices start. Devices the plan keeps are never touched.
import type { Config } from '../core/config/config.js';
import { formatIssue } from '../core/config/issues.js';
import { planReload, type ReloadPlan } from '../core/config/site-diff.js';
import type { ConfigIssue, LogLevel } from '../core/config/site-types.js';
import type { Time } from '../core/time.js';
import type { CommandService } from '../device/commands.js';
import type { Reporter } from '../device/reporter.js';
import type { CloudSide } from './cloud-side.js';
import type { ConfigState } from './config-state.js';
import type { ReloadCandidate, ReloadResult } from './gateway-handle.js';
import type { Logger } from './log.js';
import { retireDevice, type RetiringParts } from './removed-devices.js';
import { createCommandService, type Southbound } from './southbound.js';
import { monotonicUsec, type Notifier } from './systemd.js';

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

/** Devices that stop: removed, replaced, or on a bus that is removed or restarts. */
function leaving(plan: ReloadPlan, running: Config): Array<{ name: string; bus: string; replaced: boolean }> {
  const replaced = new Set(plan.devicesReplaced);
  const removed = new Set(plan.devicesRemoved);
  return running.site.devices.filter((d) => replaced.has(d.name) || removed.has(d.name)).map((d) => ({ name: d.name, bus: d.bus, replaced: replaced.has(d.name) }));
}

export async function applyReloadPlan(plan: ReloadPlan, running: Config, next: Config, parts: ReloadParts): Promise<void> {
  const { southbound, cloudSide, reporter, commands } = parts;
  const gone = leaving(plan, running);
  await Promise.all(gone.map((d) => southbound.removeDevice(d.name, d.bus)));
  await Promise.all(gone.map((d) => retireDevice(d.name, d.replaced, parts.retiring, async () => {
    await cloudSide.removeDevice(d.name, parts.settleMs, d.replaced);
    commands.delete(d.name);
    reporter.removeDevice(d.name);
  })));
  await Promise.all([...plan.busesRemoved, ...plan.busesRestarted].map((name) => southbound.removeBus(name)));
  for (const name of [...plan.busesAdded, ...plan.busesRestarted]) {
    const bus = next.site.buses.find((b) => b.name === name);
    if (bus) southbound.addBus(bus, next.site);
  }
  const starting = new Set([...plan.devicesAdded, ...plan.devicesReplaced]);
  for (const device of next.compiled.devices) {
    if (!starting.has(device.config.name)) continue;
    reporter.addDevice(device.config);
    southbound.addDevice(device);
    const service = createCommandService(device, southbound, parts.commandLog);
    if (service) commands.set(device.config.name, service);
    cloudSide.addDevice(device.config, service, next.site);
  }
  if (plan.logLevel !== undefined) parts.setLogLevel(plan.logLevel);
}

export interface ReloaderOptions {
  initial: Config;
  parts: ReloadParts;
  state: ConfigState;
  notifier: Notifier;
  logger: Logger;
  time: Time;
  /** The systemd status line after a reload. */
  summary(): string;
  /** After an applied reload: the config now running. */
  applied(next: Config): void;
}

/** Runs reloads one at a time (a SIGHUP during a reload queues behind it); never throws. */
export function createReloader(options: ReloaderOptions): { reload(load: () => ReloadCandidate | Promise<ReloadCandidate>): Promise<ReloadResult>; current(): Config; idle(): Promise<void> } {
  const { state, notifier, logger, time } = options;
  let running = options.initial;
  let queue: Promise<unknown> = Promise.resolve();

  const refuse = (problems: readonly ConfigIssue[], err?: unknown): ReloadResult => {
    state.record('refused', time.now(), undefined, problems);
    // One line with every problem and its path; the running config stays as it was.
    logger.error({ problems: problems.map(formatIssue), generation: state.status().generation, ...(err === undefined ? {} : { err }) }, 'site file reload refused: nothing changed');
    return { outcome: 'refused', generation: state.status().generation, problems: [...problems] };
  };

  const once = async (load: () => ReloadCandidate | Promise<ReloadCandidate>): Promise<ReloadResult> => {
    const startedAt = time.now();
    notifier.reloading('reloading the site file', monotonicUsec());
    try {
      const candidate = await load();
      const next = candidate.config;
      if (!next) return refuse(candidate.issues.length > 0 ? candidate.issues : [{ path: 'reload', message: 'no config to reload' }]);
      const decision = planReload(running, next);
      if (!decision.accepted) return refuse(decision.issues);
      const { plan } = decision;
      if (plan.identical) {
        state.record('unchanged', time.now(), candidate.sha256);
        logger.info({ generation: state.status().generation }, 'site file reload: nothing changed');
        return { outcome: 'unchanged', generation: state.status().generation, problems: [] };
      }
      await applyReloadPlan(plan, running, next, options.parts);
      running = next;
      options.applied(next);
      state.record('applied', time.now(), candidate.sha256);
      logger.info({
        generation: state.status().generation, durationMs: time.now() - startedAt, kept: plan.devicesKept.length,
        added: plan.devicesAdded, removed: plan.devicesRemoved, replaced: plan.devicesReplaced,
        busesAdded: plan.busesAdded, busesRemoved: plan.busesRemoved, busesRestarted: plan.busesRestarted, ...(plan.logLevel ? { logLevel: plan.logLevel } : {}),
      }, 'site file reloaded');
      return { outcome: 'applied', generation: state.status().generation, problems: [] };
    } catch (err) {
      // A fault of ours (reading or applying): reported like a refusal, on the same one line, with the error.
      return refuse([{ path: 'reload', message: `reload failed: ${err instanceof Error ? err.message : String(err)}` }], err);
    } finally {
      notifier.ready(options.summary());
    }
  };

  return {
    reload(load) {
      const result = queue.then(() => once(load));
      queue = result.catch(() => undefined);
      return result;
    },
    current: () => running,
    idle: () => queue.then(() => undefined),
  };
}
