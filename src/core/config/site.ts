// validateSite: the `buses` and `devices` of a parsed site file -> normalised SiteConfig, or every issue.
import { readBuses } from './buses.js';
import { compiledSiteOf, type CompiledSite } from './compile.js';
import { readDevicesSteps } from './devices.js';
import { runSteps, type Steps } from './steps.js';
import { Fields, isMapping } from './fields.js';
import { describeKind, sortIssues } from './issues.js';
import type { ConfigIssue, SiteConfig } from './site-types.js';
import { EMPTY_LIBRARY, type ProfileLibrary } from './profile-types.js';

export { BUS_DEFAULTS, defaultInterFrameDelayMs, t35Ms } from './buses.js';
export { DEVICE_DEFAULTS } from './devices.js';
export { REPORT_DEFAULTS } from './points.js';

/** Top-level keys of a site file; `gateway` is checked by schema.ts (it needs the environment). */
export const SITE_SECTIONS = ['gateway', 'buses', 'devices'] as const;

export interface SiteResult {
  /** Present only when there is no issue at all. */
  site?: SiteConfig;
  /** Each device's codecs and read plan, built while validating; present with `site`. */
  compiled?: CompiledSite;
  issues: ConfigIssue[];
}

/** Pure: checks everything it can and reports all problems at once, each with its path. `profiles`: what `profile:` may name. */
export function validateSite(raw: unknown, profiles: ProfileLibrary = EMPTY_LIBRARY): SiteResult {
  return runSteps(validateSiteSteps(raw, profiles));
}

/** validateSite, yielding between devices. */
export function* validateSiteSteps(raw: unknown, profiles: ProfileLibrary = EMPTY_LIBRARY): Steps<SiteResult> {
  const issues: ConfigIssue[] = [];
  if (!isMapping(raw ?? {})) {
    return { issues: [{ path: '(top level)', message: `must be a mapping with gateway, buses and devices (got ${describeKind(raw)})` }] };
  }
  const root = Fields.of(raw ?? {}, '', issues)!;
  root.take('gateway');
  // "x-" keys hold YAML anchors for reuse (as in docker-compose files); they are not settings.
  for (const key of Object.keys(raw ?? {})) if (key.startsWith('x-')) root.take(key);
  const busList = root.list('buses', { required: true });
  const deviceList = root.list('devices', { required: true });
  root.rejectUnknownKeys();
  const { buses, declared } = readBuses(busList ?? [], 'buses', issues);
  if (busList && busList.length === 0) issues.push({ path: 'buses', message: 'must list at least one bus' });
  const compiled = yield* readDevicesSteps(deviceList ?? [], 'devices', issues, buses, busList ? declared : undefined, profiles);
  if (issues.length > 0) return { issues: sortIssues(issues) };
  return { site: { buses, devices: compiled.map((device) => device.config) }, compiled: compiledSiteOf(compiled), issues };
}
