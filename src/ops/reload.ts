// Live reload, one at a time: the site file read again, compared with what runs (a plan of
// core/config/site-diff.ts), applied whole (reload-apply.ts) or not at all, the outcome recorded
// (config-state.ts, the answer of `fieldgate reload`) and logged on one line.
import type { Config } from '../core/config/config.js';
import { formatIssue } from '../core/config/issues.js';
import { planReload, type ReloadPlan } from '../core/config/site-diff.js';
import { checkAddressReuse, type AddressHolder } from '../core/config/address-reuse.js';
import { keepRunningAddresses } from '../core/config/sub-device-addresses.js';
import type { ConfigIssue } from '../core/config/site-types.js';
import type { TimeWithWall } from '../core/time.js';
import type { ConfigState } from './config-state.js';
import type { ReloadCandidate, ReloadResult } from './gateway-handle.js';
import type { Logger } from './log.js';
import { applyReloadPlan, rollBackReloadPlan, type ReloadParts } from './reload-apply.js';
import { monotonicUsec, type Notifier } from './systemd.js';

export type { ReloadParts } from './reload-apply.js';

/**
 * A reload removing more than half the devices is more often a file caught half written (rewritten
 * in place) than an edit: applied, but said loudly, with every name.
 */
function warnIfMostRemoved(plan: ReloadPlan, running: Config, sha256: string | undefined, logger: Logger): void {
  const before = running.site.devices.length;
  if (plan.devicesRemoved.length * 2 <= before) return;
  logger.warn({
    removed: plan.devicesRemoved, removedCount: plan.devicesRemoved.length, devicesBefore: before,
    devicesAfter: before - plan.devicesRemoved.length + plan.devicesAdded.length, ...(sha256 ? { sha256 } : {}),
  }, 'site file reload removes more than half the devices');
}

export interface ReloaderOptions {
  initial: Config;
  parts: ReloadParts;
  state: ConfigState;
  notifier: Notifier;
  logger: Logger;
  time: TimeWithWall;
  /** The systemd status line after a reload. */
  summary(): string;
  /** After an applied reload: the config now running. */
  applied(next: Config): void;
  /** Address -> the device announced under it now or last (sub-device-record.ts); none: only the running config's. */
  addressHolders?(): ReadonlyMap<string, AddressHolder>;
}

/** Runs reloads one at a time (a SIGHUP during a reload queues behind it); never throws. */
export function createReloader(options: ReloaderOptions): { reload(load: () => ReloadCandidate | Promise<ReloadCandidate>): Promise<ReloadResult>; current(): Config; idle(): Promise<void> } {
  const { state, notifier, logger, time } = options;
  let running = options.initial;
  let queue: Promise<unknown> = Promise.resolve();

  const refuse = (problems: readonly ConfigIssue[], err?: unknown): ReloadResult => {
    state.record('refused', time.wallNow(), undefined, problems);
    // One line with every problem and its path; the running config stays as it was.
    logger.error({ problems: problems.map(formatIssue), generation: state.status().generation, ...(err === undefined ? {} : { err }) }, 'site file reload refused: nothing changed');
    return { outcome: 'refused', generation: state.status().generation, problems: [...problems] };
  };

  /** Applying failed part-way: everything it touched goes back to the running config; the outcome is `failed`. */
  const rollBack = async (plan: ReloadPlan, next: Config, sha256: string | undefined, err: unknown, startedAt: number): Promise<ReloadResult> => {
    const why = err instanceof Error ? err.message : String(err);
    let rollbackError: unknown;
    try {
      await rollBackReloadPlan(plan, running, next, options.parts);
    } catch (failure) {
      rollbackError = failure;
    }
    try {
      // Whoever follows the running config (the own device's commands) is told it again.
      options.applied(running);
    } catch (failure) {
      rollbackError ??= failure;
    }
    const message = rollbackError === undefined
      ? `reload failed while applying, rolled back: ${why}`
      : `reload failed while applying and could not be rolled back (restart fieldgate): ${why}; rollback: ${rollbackError instanceof Error ? rollbackError.message : String(rollbackError)}`;
    const problems: ConfigIssue[] = [{ path: 'reload', message }];
    state.record('failed', time.wallNow(), undefined, problems);
    const context = {
      err, generation: state.status().generation, sha256, durationMs: time.now() - startedAt,
      added: plan.devicesAdded, removed: plan.devicesRemoved, replaced: plan.devicesReplaced, ...(rollbackError === undefined ? {} : { rollbackErr: rollbackError }),
    };
    // One line per failed reload: what it tried, why it failed, whether the old config runs whole again.
    if (rollbackError === undefined) logger.error(context, 'site file reload failed: rolled back, the running config is unchanged');
    else logger.fatal(context, 'site file reload failed and was not rolled back: restart fieldgate');
    return { outcome: 'failed', generation: state.status().generation, problems };
  };

  const once = async (load: () => ReloadCandidate | Promise<ReloadCandidate>): Promise<ReloadResult> => {
    const startedAt = time.now();
    notifier.reloading('reloading the site file', monotonicUsec());
    try {
      const candidate = await load();
      if (!candidate.config) return refuse(candidate.issues.length > 0 ? candidate.issues : [{ path: 'reload', message: 'no config to reload' }]);
      // Every sub-device keeps the address it runs under unless the file writes another out.
      const { config: next, issues: addressIssues } = keepRunningAddresses(candidate.config, running);
      if (!next) return refuse(addressIssues);
      // No device takes an address another was announced under (renamed, removed) unless the file writes it out.
      const reuse = checkAddressReuse(next, options.addressHolders?.() ?? new Map());
      if (reuse.issues.length > 0) return refuse(reuse.issues);
      const decision = planReload(running, next);
      if (!decision.accepted) return refuse(decision.issues);
      const { plan } = decision;
      warnIfMostRemoved(plan, running, candidate.sha256, logger);
      if (plan.identical) {
        state.record('unchanged', time.wallNow(), candidate.sha256);
        logger.info({ generation: state.status().generation }, 'site file reload: nothing changed');
        return { outcome: 'unchanged', generation: state.status().generation, problems: [] };
      }
      try {
        await applyReloadPlan(plan, running, next, options.parts);
        options.applied(next);
      } catch (err) {
        return await rollBack(plan, next, candidate.sha256, err, startedAt);
      }
      running = next;
      state.record('applied', time.wallNow(), candidate.sha256);
      logger.info({
        generation: state.status().generation, durationMs: time.now() - startedAt, kept: plan.devicesKept.length,
        added: plan.devicesAdded, removed: plan.devicesRemoved, replaced: plan.devicesReplaced,
        busesAdded: plan.busesAdded, busesRemoved: plan.busesRemoved, busesRestarted: plan.busesRestarted, ...(plan.logLevel ? { logLevel: plan.logLevel } : {}),
      }, 'site file reloaded');
      return { outcome: 'applied', generation: state.status().generation, problems: [] };
    } catch (err) {
      // A fault of ours while reading or planning (nothing applied yet): reported like a refusal, on the same one line, with the error.
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
