// What the cloud's site commands refuse before anything is read or applied (pure): params, a text
// that would cut the way back (the own identity, the link it answers on), and the plan as the
// cloud sees it.
import type { Config } from './config.js';
import { describeValue } from './issues.js';
import { checkAddressReuse, type AddressHolder } from './address-reuse.js';
import { planReload, type ReloadPlan } from './site-diff.js';
import { keepRunningAddresses } from './sub-device-addresses.js';
import type { ConfigIssue } from './site-types.js';

export interface SiteApplyParams {
  text: string;
  baseDigest: string;
  /** 0: applied and confirmed at once (no automatic rollback). */
  confirmWithinS: number;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

const DIGEST = /^[0-9a-f]{64}$/;
/** Below this a changed bus or link has no time to come up: every apply would roll back. */
export const MIN_CONFIRM_S = 5;

function unknownParams(params: Record<string, unknown>, known: readonly string[]): string | undefined {
  const unknown = Object.keys(params).filter((key) => !known.includes(key));
  return unknown.length === 0 ? undefined : `unknown param(s) ${unknown.slice(0, 5).map(describeValue).join(', ')} (known: ${known.join(', ') || 'none'})`;
}

/** The text a command carries: a string within `maxBytes` (UTF-8). */
export function siteTextParam(params: Record<string, unknown>, maxBytes: number, known: readonly string[]): Parsed<string> {
  const extra = unknownParams(params, known);
  if (extra) return { ok: false, message: extra };
  const { text } = params;
  if (typeof text !== 'string') return { ok: false, message: `text must be the site text as a string (got ${describeValue(text)})` };
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > maxBytes) return { ok: false, message: `text is ${bytes} bytes, more than the ${maxBytes} byte limit` };
  return { ok: true, value: text };
}

export function parseApplyParams(params: Record<string, unknown>, maxBytes: number, confirmMaxS: number): Parsed<SiteApplyParams> {
  const text = siteTextParam(params, maxBytes, ['text', 'baseDigest', 'confirmWithinS']);
  if (!text.ok) return text;
  const { baseDigest, confirmWithinS = 0 } = params;
  if (typeof baseDigest !== 'string' || !DIGEST.test(baseDigest)) {
    return { ok: false, message: `baseDigest must be the digest site_get gave (64 hex digits) (got ${describeValue(baseDigest)})` };
  }
  if (typeof confirmWithinS !== 'number' || !Number.isInteger(confirmWithinS) || (confirmWithinS !== 0 && (confirmWithinS < MIN_CONFIRM_S || confirmWithinS > confirmMaxS))) {
    return { ok: false, message: `confirmWithinS must be 0 (no confirmation) or whole seconds ${MIN_CONFIRM_S}..${confirmMaxS} (got ${describeValue(confirmWithinS)})` };
  }
  return { ok: true, value: { text: text.value, baseDigest, confirmWithinS } };
}

export function parseGenerationParam(params: Record<string, unknown>): Parsed<number> {
  const extra = unknownParams(params, ['generation']);
  if (extra) return { ok: false, message: extra };
  const { generation } = params;
  if (typeof generation !== 'number' || !Number.isInteger(generation) || generation < 1) {
    return { ok: false, message: `generation must be a generation number from site_history (got ${describeValue(generation)})` };
  }
  return { ok: true, value: generation };
}

export function noParams(params: Record<string, unknown>): string | undefined {
  return unknownParams(params, []);
}

/**
 * A text that would remove the own identity or move the link it answers on: the cloud could not
 * send the confirm, nor a rollback. Refused even where a reload would refuse it later, with a
 * message that says why.
 */
export function wayBackIssues(running: Config, next: Config): ConfigIssue[] {
  const before = running.gateway.cloud;
  const after = next.gateway.cloud;
  if (!after.identity) return [{ path: 'gateway.cloud.identity', message: 'removes fieldgate\'s own identity, the way this change came and the way back: refused' }];
  const issues: ConfigIssue[] = [];
  const sameIdentity = before.identity?.accessToken === after.identity.accessToken && before.identity?.deviceKey === after.identity.deviceKey
    && before.identity?.deviceId === after.identity.deviceId && before.identity?.projectKey === after.identity.projectKey;
  if (!sameIdentity) issues.push({ path: 'gateway.cloud.identity', message: 'changes fieldgate\'s own identity, the way this change came and the way back: refused' });
  if (before.mqttUrl !== after.mqttUrl) issues.push({ path: 'gateway.cloud.mqttUrl', message: 'moves the link fieldgate\'s identity answers on: refused (change it on the box)' });
  return issues;
}

/** site_check's plan: what an apply would change. */
export function planView(plan: ReloadPlan): Record<string, unknown> {
  return {
    identical: plan.identical,
    devicesAdded: plan.devicesAdded, devicesChanged: plan.devicesReplaced, devicesRemoved: plan.devicesRemoved,
    busesAdded: plan.busesAdded, busesRestarted: plan.busesRestarted, busesRemoved: plan.busesRemoved,
    ...(plan.logLevel === undefined ? {} : { logLevel: plan.logLevel }),
  };
}

/** What must come up after an apply before it may be confirmed: buses added or restarted, changed devices' own links. */
export function partsToWatch(plan: ReloadPlan, next: Config): { buses: string[]; links: string[] } {
  const changed = new Set([...plan.devicesAdded, ...plan.devicesReplaced]);
  const links = next.site.devices.filter((d) => changed.has(d.name) && d.cloud && (d.cloud.mode ?? next.gateway.cloud.mode) !== 'gateway').map((d) => d.name);
  return { buses: [...plan.busesAdded, ...plan.busesRestarted], links };
}

export type SitePlan = { ok: true; plan: ReloadPlan; watch: { buses: string[]; links: string[] } } | { ok: false; issues: ConfigIssue[]; restartKeys: string[] };

/**
 * The reload's own decision for a text's config: the plan, or every reason it would be refused.
 * `guardWayBack` (a change from the cloud): the way back is checked first, with its own message.
 */
export function planSiteChange(running: Config, candidate: Config, holders: ReadonlyMap<string, AddressHolder>, guardWayBack = true): SitePlan {
  const wayBack = guardWayBack ? wayBackIssues(running, candidate) : [];
  const { config: next, issues: addressIssues } = keepRunningAddresses(candidate, running);
  if (!next) return { ok: false, issues: [...wayBack, ...addressIssues], restartKeys: [] };
  const reuse = checkAddressReuse(next, holders).issues;
  const decision = planReload(running, next);
  const planIssues = decision.accepted ? [] : decision.issues;
  // The way back's own message replaces the reload's "cannot change while running" for the same key.
  const restartKeys = planIssues.map((i) => i.path).filter((path) => !wayBack.some((w) => path.startsWith(w.path)));
  const issues = [...wayBack, ...reuse, ...planIssues.filter((i) => restartKeys.includes(i.path))];
  if (issues.length > 0 || !decision.accepted) return { ok: false, issues, restartKeys };
  return { ok: true, plan: decision.plan, watch: partsToWatch(decision.plan, next) };
}
