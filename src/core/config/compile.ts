// compileSite (pure): each device's codecs and starting read plan, built once and frozen, shared
// by the poller, the command path and `validate`. A point that cannot be coded is a config issue.
import { planReads, type ReadRequest } from '../modbus/plan.js';
import { compilePoint, type PointCodec } from '../points/codec.js';
import { joinPath } from './fields.js';
import { ConfigError } from './issues.js';
import type { ConfigIssue, DeviceConfig, PointConfig, SiteConfig } from './site-types.js';

export interface CompiledDevice {
  readonly config: DeviceConfig;
  /** One codec per point id. */
  readonly codecs: ReadonlyMap<string, PointCodec>;
  /** The plan a poll starts from; the poller's learner replans from it at run time. */
  readonly plan: readonly ReadRequest[];
}

export interface CompiledSite {
  readonly devices: readonly CompiledDevice[];
  /** The compiled device of that name (names are unique). */
  device(name: string): CompiledDevice | undefined;
}

/** Codecs of the points that are valid so far; each one that cannot be coded is an issue at its path. */
export function compileCodecs(points: readonly (PointConfig | undefined)[], pointsPath: string, issues: ConfigIssue[]): Map<string, PointCodec> {
  const codecs = new Map<string, PointCodec>();
  points.forEach((point, index) => {
    if (!point) return;
    try {
      codecs.set(point.id, Object.freeze(compilePoint(point)));
    } catch (err) {
      issues.push({ path: joinPath(pointsPath, index), message: err instanceof Error ? err.message : String(err) });
    }
  });
  return codecs;
}

/** A device whose every point has a codec in `codecs` -> its frozen compiled form, or an issue at `path`. */
export function compiledDevice(config: DeviceConfig, codecs: ReadonlyMap<string, PointCodec>, path: string, issues: ConfigIssue[]): CompiledDevice | undefined {
  let requests: ReadRequest[];
  try {
    requests = planReads(config.points, config.limits);
  } catch (err) {
    issues.push({ path, message: `cannot plan reads: ${err instanceof Error ? err.message : String(err)}` });
    return undefined;
  }
  const plan = requests.map((request) => Object.freeze({ ...request, points: Object.freeze(request.points) as PointConfig[] }));
  return Object.freeze({ config, codecs, plan: Object.freeze(plan) });
}

export function compiledSiteOf(devices: readonly CompiledDevice[]): CompiledSite {
  const byName = new Map(devices.map((device) => [device.config.name, device]));
  return Object.freeze({ devices: Object.freeze([...devices]), device: (name: string) => byName.get(name) });
}

/** Pure: a normalised site -> every device compiled, or every compile issue with its path. */
export function compileSite(site: SiteConfig, path = 'devices'): { compiled?: CompiledSite; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  const devices = site.devices.map((device, index) => {
    const at = joinPath(path, index);
    const codecs = compileCodecs(device.points, joinPath(at, 'points'), issues);
    return codecs.size === device.points.length ? compiledDevice(device, codecs, at, issues) : undefined;
  });
  if (issues.length > 0) return { issues };
  return { compiled: compiledSiteOf(devices as CompiledDevice[]), issues };
}

/** One device outside a site file (tests, one-off tools); throws ConfigError (paths start with the device's name). */
export function compileDevice(config: DeviceConfig): CompiledDevice {
  const issues: ConfigIssue[] = [];
  const at = `device "${config.name}"`;
  const codecs = compileCodecs(config.points, joinPath(at, 'points'), issues);
  const compiled = issues.length === 0 ? compiledDevice(config, codecs, at, issues) : undefined;
  if (!compiled) throw new ConfigError(issues);
  return compiled;
}
