// Site file (YAML or JSON) + environment -> deeply frozen Config, or a ConfigError with every issue.
import { checkCloudIdentities } from '../core/config/cloud-checks.js';
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { extname } from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';
import { ConfigError, sortIssues } from '../core/config/issues.js';
import { validateGateway } from '../core/config/schema.js';
import { validateSiteSteps } from '../core/config/site.js';
import { runSteps, type Steps } from '../core/config/steps.js';
import { compileSharedSite } from '../core/config/shared-point-lists.js';
import { LOG_LEVELS_ENV, parseComponentLevels } from '../core/config/log-levels.js';
import type { Config } from '../core/config/config.js';
import type { ConfigIssue, GatewaySettings, SiteConfig } from '../core/config/site-types.js';
import { loadProfiles, type LoadedProfiles } from './profile-library.js';
import { EMPTY_LIBRARY } from '../core/config/profile-types.js';
import { isMapping } from '../core/config/fields.js';
import { splitDeviceItems } from '../core/config/yaml-device-split.js';
import { decodeSiteBytes, depthIssue, SITE_TEXT_DEFAULTS, siteTextLimits, type SiteTextLimits } from '../core/config/text-guards.js';

export { ConfigError };

export interface Parsed {
  raw?: unknown;
  issues: ConfigIssue[];
}

function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `${before.length}:${before[before.length - 1].length + 1}`;
}

/** V8 gives "... at position N" for most errors but only a text snippet for an unexpected token. */
function jsonIssue(text: string, file: string, message: string): ConfigIssue {
  const position = /at position (\d+)/.exec(message);
  if (position) {
    const reason = message.replace(/ in JSON at position \d+.*$/s, '');
    return { path: `${file}:${lineAndColumn(text, Number(position[1]))}`, message: `JSON syntax error: ${reason}` };
  }
  const token = /^Unexpected token '(.)'/.exec(message);
  const trailingComma = token && (token[1] === ']' || token[1] === '}') ? /,\s*[\]}]/.exec(text) : null;
  if (trailingComma) {
    return { path: `${file}:${lineAndColumn(text, trailingComma.index)}`, message: 'JSON syntax error: trailing comma' };
  }
  return { path: file, message: `JSON syntax error: ${token ? token[0] : message.split('\n')[0]}` };
}

function parseJson(text: string, file: string): Parsed {
  try {
    return { raw: JSON.parse(text) as unknown, issues: [] };
  } catch (err) {
    return { issues: [jsonIssue(text, file, err instanceof Error ? err.message : String(err))] };
  }
}

/**
 * A copy of every string value, in place: V8 makes a YAML scalar a slice of the whole file's text,
 * so one kept value (a name, a token) kept the entire site file in memory for the process's life.
 * UTF-16 round trip: lossless, lone surrogates included.
 */
export function detachStrings(value: unknown, seen = new Set<object>(), copies = new Map<string, string>()): unknown {
  if (typeof value === 'string') return detached(value, copies);
  if (typeof value !== 'object' || value === null || seen.has(value)) return value;
  // Aliases and merge keys share objects: each is copied once.
  seen.add(value);
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const inner = record[key];
    if (typeof inner !== 'string') detachStrings(inner, seen, copies);
    // defineProperty, not assignment: an own "__proto__" key must stay a plain value.
    else Object.defineProperty(record, key, { value: detached(inner, copies), writable: true, enumerable: true, configurable: true });
  }
  return value;
}

/** One copy per distinct text: "holding" or "p7" written for each of 1,000 devices is one string, not 1,000. */
function detached(text: string, copies: Map<string, string>): string {
  let copy = copies.get(text);
  if (copy === undefined) {
    copy = Buffer.from(text, 'utf16le').toString('utf16le');
    copies.set(copy, copy);
  }
  return copy;
}

const YAML_OPTIONS = { merge: true, prettyErrors: false } as const;

/**
 * A plainly laid out file parsed one device at a time (core/config/yaml-device-split.ts): the
 * syntax tree of a whole large file is ~100 times its size. Undefined when it cannot be cut, or a
 * piece does not parse cleanly: then the whole document is parsed, which reports errors in place.
 */
export function parseYamlByDevice(text: string): unknown {
  const steps = parseByDeviceSteps(text);
  let step = steps.next();
  while (!step.done) step = steps.next();
  return step.value;
}

/** parseYamlByDevice one device per step, so a reader on the event loop can give it turns in between. */
export function* parseByDeviceSteps(text: string): Generator<void, unknown> {
  const split = splitDeviceItems(text);
  if (!split) return undefined;
  // The cut scans the whole file (tens of ms at 1,000 devices): a turn before the head is parsed.
  yield;
  const head = parseDocument(split.head, YAML_OPTIONS);
  // The line taken for the key must be the top-level block mapping's devices key (not text inside a
  // flow collection or a quoted string spanning lines): its value is the `[]` put in its place.
  if (!isMap(head.contents) || head.contents.flow) return undefined;
  const value = head.contents.items.find((pair) => isScalar(pair.key) && pair.key.value === 'devices')?.value;
  if (!isSeq(value) || value.range?.[0] !== split.valueOffset) return undefined;
  const raw: unknown = head.errors.length === 0 && head.warnings.length === 0 ? head.toJS({ maxAliasCount: 1000 }) : undefined;
  if (!isMapping(raw) || !Array.isArray(raw.devices) || raw.devices.length !== 0) return undefined;
  const devices: unknown[] = [];
  for (const item of split.items) {
    const doc = parseDocument(item, YAML_OPTIONS);
    if (doc.errors.length > 0 || doc.warnings.length > 0) return undefined;
    const entry: unknown = doc.toJS({ maxAliasCount: 1000 });
    if (!Array.isArray(entry) || entry.length !== 1) return undefined;
    devices.push(entry[0]);
    yield;
  }
  raw.devices = devices;
  return raw;
}

/** Exported for the test that checks both ways give the same result. */
export function parseYaml(text: string, file: string, byDevice = true): Parsed {
  if (byDevice) {
    const raw = parseYamlByDevice(text);
    if (raw !== undefined) return { raw: detachStrings(raw), issues: [] };
  }
  const lineCounter = new LineCounter();
  // merge: lets a site reuse point lists with "<<: *meter"; aliases stay bounded by toJS's maxAliasCount.
  const doc = parseDocument(text, { ...YAML_OPTIONS, lineCounter });
  if (doc.errors.length > 0) {
    return {
      issues: doc.errors.map((error) => {
        const { line, col } = lineCounter.linePos(error.pos[0]);
        return { path: `${file}:${line}:${col}`, message: `YAML syntax error: ${error.message.split('\n')[0]}` };
      }),
    };
  }
  try {
    return { raw: detachStrings(doc.toJS({ maxAliasCount: 1000 })), issues: [] };
  } catch (err) {
    return { issues: [{ path: file, message: `YAML error: ${err instanceof Error ? err.message : String(err)}` }] };
  }
}

/** JSON when the file ends in .json or its text starts with "{", YAML otherwise. Too deep a text is refused unparsed. */
export function parseSiteText(text: string, file: string, limits: SiteTextLimits = SITE_TEXT_DEFAULTS): Parsed {
  const body = text.replace(/^\uFEFF/, '');
  const tooDeep = depthIssue(body, file, limits);
  if (tooDeep) return { issues: [tooDeep] };
  const isJson = extname(file).toLowerCase() === '.json' || body.trimStart().startsWith('{');
  try {
    return isJson ? parseJson(body, file) : parseYaml(body, file);
  } catch (err) {
    // The depth estimate missed a construct and a parser ran out of stack.
    if (err instanceof RangeError) return { issues: [{ path: file, message: 'nested too deeply to parse' }] };
    throw err;
  }
}

/** At most limits.maxBytes + 1 bytes: a huge file (or /dev/zero) is never read whole. */
function readBounded(file: string, maxBytes: number): Buffer {
  const fd = openSync(file, 'r');
  try {
    if (fstatSync(fd).isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    const buffer = Buffer.alloc(Math.min(maxBytes + 1, 1 << 20));
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const read = readSync(fd, buffer, 0, Math.min(buffer.length, maxBytes + 1 - total), null);
      if (read === 0) break;
      chunks.push(Buffer.from(buffer.subarray(0, read)));
      total += read;
      if (total > maxBytes) break;
    }
    return Buffer.concat(chunks);
  } finally {
    closeSync(fd);
  }
}

export function readText(file: string, limits: SiteTextLimits): { text?: string; sha256?: string; issues: ConfigIssue[] } {
  try {
    const bytes = readBounded(file, limits.maxBytes);
    const decoded = decodeSiteBytes(bytes, file, limits);
    return decoded.issue ? { issues: [decoded.issue] } : { text: decoded.text, sha256: createHash('sha256').update(bytes).digest('hex'), issues: [] };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'file not found'
      : code === 'EISDIR' ? 'is a directory, not a site file'
        : code === 'EACCES' ? 'permission denied'
          : `cannot read (${err instanceof Error ? err.message : String(err)})`;
    return { issues: [{ path: file, message: reason }] };
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

const NO_PROFILES: LoadedProfiles = { library: EMPTY_LIBRARY, overrides: [], issues: [] };

function namesProfile(raw: unknown): boolean {
  const devices = isMapping(raw) ? raw.devices : undefined;
  return Array.isArray(devices) && devices.some((device) => isMapping(device) && device.profile !== undefined);
}

/** Checks of the machine a config will run on (files, directories); see host-checks.ts. */
export type HostCheck = (gateway: GatewaySettings) => ConfigIssue[];

/** A parsed site file and an environment -> Config, or every issue. Reads the profile directories; pure otherwise unless given a host check. */
export function checkConfig(raw: unknown, env: NodeJS.ProcessEnv, hostCheck?: HostCheck): { config?: Config; issues: ConfigIssue[] } {
  return runSteps(checkConfigSteps(raw, env, hostCheck));
}

/** checkConfig, yielding between devices (a reload's reader gives the event loop turns in between). */
export function* checkConfigSteps(raw: unknown, env: NodeJS.ProcessEnv, hostCheck?: HostCheck): Steps<{ config?: Config; issues: ConfigIssue[] }> {
  const gatewayRaw = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>).gateway : undefined;
  const gateway = validateGateway(gatewayRaw, env);
  // Read only when a device names a profile (loading all costs ~35 ms). With a broken gateway
  // section the shipped profiles are still used, so the devices are checked too.
  const profiles = namesProfile(raw) ? loadProfiles(gateway.gateway?.profileDirs ?? []) : NO_PROFILES;
  const site = yield* validateSiteSteps(raw, profiles.library);
  const cross = gateway.gateway && site.site ? checkCloudIdentities(gateway.gateway, site.site) : [];
  const host = gateway.gateway && hostCheck ? hostCheck(gateway.gateway) : [];
  const logLevels = parseComponentLevels(env[LOG_LEVELS_ENV]).issues;
  const issues = sortIssues([...gateway.issues, ...logLevels, ...host, ...profiles.issues, ...site.issues, ...cross]);
  if (issues.length > 0 || !gateway.gateway || !site.site || !site.compiled) return { issues };
  const profileOverrides = profiles.overrides;
  return { config: deepFreeze({ gateway: gateway.gateway, site: site.site, compiled: site.compiled, ...(profileOverrides.length > 0 ? { profileOverrides } : {}) }), issues };
}

/** Reads and validates a site file; throws ConfigError listing every problem. */
export function loadConfig(file: string, env: NodeJS.ProcessEnv, hostCheck?: HostCheck): Config {
  return loadConfigWithDigest(file, env, hostCheck).config;
}

/** As loadConfig, with the sha256 of the file's bytes as read (what a reload compares and status shows). */
export function loadConfigWithDigest(file: string, env: NodeJS.ProcessEnv, hostCheck?: HostCheck): { config: Config; sha256: string } {
  const limitIssues: ConfigIssue[] = [];
  const limits = siteTextLimits(env, limitIssues);
  if (limitIssues.length > 0) throw new ConfigError(limitIssues);
  const read = readText(file, limits);
  if (read.text === undefined) throw new ConfigError(read.issues);
  const parsed = parseSiteText(read.text, file, limits);
  if (parsed.issues.length > 0) throw new ConfigError(parsed.issues);
  let checked: ReturnType<typeof checkConfig>;
  try {
    checked = checkConfig(parsed.raw, env, hostCheck);
  } catch (err) {
    if (err instanceof RangeError) throw new ConfigError([{ path: file, message: 'nested too deeply to check' }]);
    throw err;
  }
  if (!checked.config) throw new ConfigError(checked.issues);
  return { config: checked.config, sha256: read.sha256 ?? '' };
}

/** A Config from settings already normalised (the reload worker's answer, tests, benches): compiles the site, devices with the same points sharing them; throws ConfigError. */
export function compiledConfig(gateway: GatewaySettings, site: SiteConfig): Config {
  const shared = compileSharedSite(site);
  if (!shared.compiled || !shared.site) throw new ConfigError(shared.issues);
  return { gateway, site: shared.site, compiled: shared.compiled };
}
