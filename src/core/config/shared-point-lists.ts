// Devices of one site with the same point list (a profile, or a list copied per device) share one
// frozen list, its codecs and, for the same limits, its read plan: a gateway of 1,000 meters holds
// one definition of each point instead of 1,000 (~14 MB at 1,000 devices x 50 points). Pure; one
// instance per site read, so a reload's next site never shares with the running one.
import { compileCodecs, compiledDevice, compiledSiteOf, type CompiledDevice, type CompiledSite } from './compile.js';
import { joinPath } from './fields.js';
import type { PointCodec } from '../points/codec.js';
import type { ConfigIssue, DeviceConfig, PointConfig, SiteConfig } from './site-types.js';
import type { ReadRequest } from '../modbus/plan.js';

interface SharedList {
  readonly points: readonly PointConfig[];
  readonly codecs: ReadonlyMap<string, PointCodec>;
  /** Read plans by the limits they were planned for (JSON of the limits). */
  readonly plans: Map<string, readonly ReadRequest[]>;
}

/** JSON that tells -0 from 0 (a scale or offset of -0 is not the same definition as 0). */
function keyOf(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => (Object.is(inner, -0) ? '-0' : inner));
}

function freezePoint(point: PointConfig): PointConfig {
  Object.freeze(point.report);
  return Object.freeze(point);
}

export class SharedPointLists {
  private readonly lists = new Map<string, SharedList>();

  /**
   * The compiled device for `config` (its points valid, `codecs` compiled from them): with the
   * list, codecs and plan of an earlier device whose points are the same, else its own, kept for
   * the next. Issues as compiledDevice.
   */
  compile(config: DeviceConfig, codecs: ReadonlyMap<string, PointCodec>, path: string, issues: ConfigIssue[]): CompiledDevice | undefined {
    const listKey = keyOf(config.points);
    const limitsKey = keyOf(config.limits);
    const shared = this.lists.get(listKey);
    if (!shared) {
      const device = compiledDevice({ ...config, points: Object.freeze(config.points.map(freezePoint)) as PointConfig[] }, codecs, path, issues);
      if (device) this.lists.set(listKey, { points: device.config.points, codecs: device.codecs, plans: new Map([[limitsKey, device.plan]]) });
      return device;
    }
    const sharedConfig: DeviceConfig = { ...config, points: shared.points as PointConfig[] };
    const plan = shared.plans.get(limitsKey);
    if (plan) return Object.freeze({ config: sharedConfig, codecs: shared.codecs, plan });
    const device = compiledDevice(sharedConfig, shared.codecs, path, issues);
    if (device) shared.plans.set(limitsKey, device.plan);
    return device;
  }
}

/**
 * compileSite with shared point lists, for a site normalised elsewhere (the reload's worker sends
 * its site as a copy, a list per device): the site returned holds the shared lists too.
 */
export function compileSharedSite(site: SiteConfig, path = 'devices'): { site?: SiteConfig; compiled?: CompiledSite; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  const shared = new SharedPointLists();
  const devices = site.devices.map((device, index) => {
    const at = joinPath(path, index);
    const codecs = compileCodecs(device.points, joinPath(at, 'points'), issues);
    return codecs.size === device.points.length ? shared.compile(device, codecs, at, issues) : undefined;
  });
  if (issues.length > 0) return { issues };
  const compiled = compiledSiteOf(devices as CompiledDevice[]);
  return { site: { ...site, devices: compiled.devices.map((device) => device.config) }, compiled, issues };
}
