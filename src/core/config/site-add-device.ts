// A device added to a site file's text without anyone writing YAML (pure): the text parsed as a
// document, the device appended to its `devices` list, the text written back with the operator's
// comments, order and quoting kept. Refused, with every problem at once, when the name or the
// (bus, unit) pair is taken, the bus or profile is unknown, or a value is out of the validator's
// range; the result still goes through Check (the reload's reader) before it is applied.
import { Document, isMap, isScalar, isSeq, parseDocument, YAMLSeq, type YAMLMap } from 'yaml';
import { NAME_PATTERN } from './buses.js';
import { isReservedName, reservedNameMessage } from './reserved-names.js';

export interface NewDevice {
  name: string;
  bus: string;
  unitId: number;
  profile: string;
  /** Absent: the validator's default. */
  pollIntervalMs?: number;
  /** The device's cloud credential (a site with a cloud only); absent: the device stays off the cloud. */
  accessToken?: string;
}

export type AddField = keyof NewDevice | 'site';

export interface AddProblem {
  field: AddField;
  /** `taken`: another device has that name or (bus, unit); the page answers 409 for it. */
  kind: 'taken' | 'unknown' | 'invalid';
  message: string;
}

/** The lines that differ: `removed` replaced by `added` at line `at` (1-based) of the old text. */
export interface TextChange {
  at: number;
  removed: string[];
  added: string[];
}

/** What the file alone does not say: the profile library's names, and whether the running site has a cloud (its URL may come from the environment). */
export interface AddContext {
  profiles: ReadonlySet<string>;
  cloud: boolean;
}

export type AddResult = { ok: true; text: string; change: TextChange } | { ok: false; problems: AddProblem[] };

/**
 * As the site file's reader parses (merge keys allowed, aliases bounded). The text is the one the
 * page shows, whose `{{secret-N}}` placeholders read as nested maps: only names, buses and units
 * are taken from it, so yaml's warning about such keys (printed to stderr) is not wanted.
 */
const PARSE_OPTIONS = { merge: true, prettyErrors: false, logLevel: 'error' } as const;
const MAX_ALIASES = 1000;
/** The validator's bounds of pollIntervalMs (docs/site-file.md): 0, or 10 ms .. 24 h. */
const POLL_MIN_MS = 10;
const POLL_MAX_MS = 86_400_000;

interface SiteFacts {
  buses: Map<string, string>;
  devices: { name: unknown; bus: unknown; unitId: unknown }[];
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** Names, buses and units as the file means them (anchors and merge keys resolved). */
function factsOf(doc: Document): SiteFacts {
  const root = record(doc.toJS({ maxAliasCount: MAX_ALIASES })) ?? {};
  const list = (key: string) => (Array.isArray(root[key]) ? (root[key] as unknown[]).map((item) => record(item) ?? {}) : []);
  const buses = new Map(list('buses').filter((b) => typeof b.name === 'string').map((b) => [b.name as string, typeof b.kind === 'string' ? b.kind : 'rtu']));
  return { buses, devices: list('devices').map((d) => ({ name: d.name, bus: d.bus, unitId: d.unitId })) };
}

function unitRange(kind: string): [number, number] {
  return kind === 'tcp' ? [0, 255] : [1, 247];
}

function problemsOf(device: NewDevice, facts: SiteFacts, { profiles, cloud }: AddContext): AddProblem[] {
  const problems: AddProblem[] = [];
  const { name, bus, unitId, profile, pollIntervalMs, accessToken } = device;
  if (!NAME_PATTERN.test(name)) problems.push({ field: 'name', kind: 'invalid', message: `name must start with a letter or digit and contain only letters, digits, "_", "." and "-" (got ${JSON.stringify(name.slice(0, 80))})` });
  else if (isReservedName(name)) problems.push({ field: 'name', kind: 'invalid', message: reservedNameMessage(name) });
  else if (facts.devices.some((d) => d.name === name)) problems.push({ field: 'name', kind: 'taken', message: `a device named "${name}" is already in the site file` });
  const kind = facts.buses.get(bus);
  if (kind === undefined) {
    const known = [...facts.buses.keys()];
    problems.push({ field: 'bus', kind: 'unknown', message: `no bus named ${JSON.stringify(bus.slice(0, 80))} in the site file (${known.length ? `buses: ${known.join(', ')}` : 'it declares none'})` });
  } else {
    const [low, high] = unitRange(kind);
    const holder = facts.devices.find((d) => d.bus === bus && d.unitId === unitId);
    if (!Number.isInteger(unitId) || unitId < low || unitId > high) problems.push({ field: 'unitId', kind: 'invalid', message: `unitId must be ${low}..${high} on ${kind} bus "${bus}" (got ${unitId})` });
    else if (holder) problems.push({ field: 'unitId', kind: 'taken', message: `unit ${unitId} on bus "${bus}" is already device "${String(holder.name)}"` });
  }
  if (!profiles.has(profile)) problems.push({ field: 'profile', kind: 'unknown', message: `no profile named ${JSON.stringify(profile.slice(0, 80))} in the library (fieldgate profiles list)` });
  if (pollIntervalMs !== undefined && !(Number.isInteger(pollIntervalMs) && (pollIntervalMs === 0 || (pollIntervalMs >= POLL_MIN_MS && pollIntervalMs <= POLL_MAX_MS)))) {
    problems.push({ field: 'pollIntervalMs', kind: 'invalid', message: `pollIntervalMs must be 0 or ${POLL_MIN_MS}..${POLL_MAX_MS} ms (got ${pollIntervalMs})` });
  }
  if (accessToken !== undefined) {
    if (!cloud) problems.push({ field: 'accessToken', kind: 'invalid', message: 'the site has no cloud (gateway.cloud.mqttUrl): leave the access token empty' });
    else if (accessToken.length === 0 || /[\s\0-\x1f]/.test(accessToken)) problems.push({ field: 'accessToken', kind: 'invalid', message: 'the access token must be non-empty and contain no spaces or control characters' });
  }
  return problems;
}

/** The first and last lines that differ; one inserted block gives just its lines. */
export function textChange(before: string, after: string): TextChange {
  const a = before.split('\n');
  const b = after.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  return { at: start + 1, removed: a.slice(start, endA), added: b.slice(start, endB) };
}

function entryOf(device: NewDevice): Record<string, unknown> {
  return {
    name: device.name, bus: device.bus, unitId: device.unitId, profile: device.profile,
    ...(device.pollIntervalMs !== undefined ? { pollIntervalMs: device.pollIntervalMs } : {}),
    ...(device.accessToken !== undefined ? { cloud: { accessToken: device.accessToken } } : {}),
  };
}

/** The entry as a block list item at `indent` columns, one line each, ending with a line break. */
function blockItem(device: NewDevice, indent: number): string {
  const doc = new Document([entryOf(device)]);
  const cloud = (doc.contents as YAMLSeq<YAMLMap>).items[0].get('cloud', true);
  if (isMap(cloud)) cloud.flow = true;
  return doc.toString({ lineWidth: 0 }).split('\n').filter((line) => line !== '').map((line) => ' '.repeat(indent) + line).join('\n') + '\n';
}

function lineStart(text: string, at: number): number {
  return text.lastIndexOf('\n', at - 1) + 1;
}

function lineEnd(text: string, at: number): number {
  const end = text.indexOf('\n', at);
  return end === -1 ? text.length : end + 1;
}

/**
 * The new text, changed only where the entry goes: after the last item of a block list (at the
 * list's indentation), in place of an empty list, or as a new `devices` key at the end. Undefined
 * for a layout not spliced (an inline list with items): the whole document is written back then.
 */
function spliced(text: string, devices: unknown, device: NewDevice): string | undefined {
  if (devices === undefined) {
    const gap = text.length === 0 || text.endsWith('\n') ? '' : '\n';
    return `${text}${gap}devices:\n${blockItem(device, 2)}`;
  }
  if (isSeq(devices) && devices.range) {
    if (devices.items.length === 0) {
      // `devices: []`: the brackets go, the entry follows on the next lines (a comment on the line stays).
      const [start, end] = devices.range;
      const next = lineEnd(text, end);
      const head = text.slice(0, start).replace(/[ \t]+$/, '') + text.slice(end, next);
      return head + (head.endsWith('\n') ? '' : '\n') + blockItem(device, 2) + text.slice(next);
    }
    if (devices.flow) return undefined;
    const last = devices.items[devices.items.length - 1] as { range?: [number, number, number] | null };
    if (!last.range) return undefined;
    const indent = devices.range[0] - lineStart(text, devices.range[0]);
    const at = lineEnd(text, Math.max(last.range[1] - 1, 0));
    return text.slice(0, at) + (at === text.length && !text.endsWith('\n') ? '\n' : '') + blockItem(device, indent) + text.slice(at);
  }
  if (isScalar(devices) && devices.value === null && devices.range) {
    // `devices:` with nothing after it.
    const next = lineEnd(text, devices.range[0]);
    return text.slice(0, next) + (text.slice(0, next).endsWith('\n') ? '' : '\n') + blockItem(device, 2) + text.slice(next);
  }
  return undefined;
}

const PLACEHOLDER = /\{\{secret-(\d+)\}\}/g;
const MASKED = /__secret-(\d+)__/g;

/**
 * The whole document written back with the entry in its devices list (comments kept, spacing
 * normalised). The page's placeholders would be written as maps: they are masked as plain words
 * for the round trip and put back; a file that already holds such a word is left to the site page.
 */
function wholeDocument(text: string, device: NewDevice): string | undefined {
  if (/__secret-\d+__/.test(text)) return undefined;
  const doc = parseDocument(text.replace(PLACEHOLDER, '__secret-$1__'), PARSE_OPTIONS);
  const node = doc.get('devices', true);
  const list = isSeq(node) && node.items.length > 0 ? node : new YAMLSeq();
  if (list !== node) doc.set('devices', list);
  list.add(doc.createNode(entryOf(device)));
  return doc.toString({ lineWidth: 0 }).replace(MASKED, '{{secret-$1}}');
}

/** The devices a text declares, as the reader would see them; undefined when it does not parse. */
function devicesOf(text: string): unknown[] | undefined {
  const doc = parseDocument(text, PARSE_OPTIONS);
  if (doc.errors.length > 0 || doc.warnings.length > 0) return undefined;
  const root = record(doc.toJS({ maxAliasCount: MAX_ALIASES }));
  return Array.isArray(root?.devices) ? root.devices : root?.devices === null || root?.devices === undefined ? [] : undefined;
}

/** `text` with `device` appended to its devices (a `devices` key made when there is none). */
export function addDeviceToSite(text: string, device: NewDevice, context: AddContext): AddResult {
  const doc = parseDocument(text, PARSE_OPTIONS);
  const broken = [...doc.errors, ...doc.warnings];
  if (broken.length > 0) return { ok: false, problems: [{ field: 'site', kind: 'invalid', message: `the site file does not parse: ${broken[0].message.split('\n')[0]}` }] };
  if (!isMap(doc.contents)) return { ok: false, problems: [{ field: 'site', kind: 'invalid', message: 'the site file is not a mapping with gateway, buses and devices' }] };
  let facts: SiteFacts;
  let before: unknown[] | undefined;
  try {
    facts = factsOf(doc);
    before = devicesOf(text);
  } catch (err) {
    return { ok: false, problems: [{ field: 'site', kind: 'invalid', message: `the site file cannot be read: ${(err as Error).message}` }] };
  }
  const problems = problemsOf(device, facts, context);
  if (problems.length > 0) return { ok: false, problems };
  const node = doc.get('devices', true);
  if (before === undefined || (node !== undefined && !isSeq(node) && !(isScalar(node) && node.value === null))) {
    return { ok: false, problems: [{ field: 'site', kind: 'invalid', message: 'devices must be a list to add a device to it' }] };
  }
  const expected = JSON.stringify([...before, entryOf(device)]);
  const cut = spliced(text, node, device);
  // The splice is kept only if the file then reads as before plus the entry; else the whole document is written back (comments kept, spacing normalised).
  if (cut !== undefined && JSON.stringify(devicesOf(cut)) === expected) return { ok: true, text: cut, change: textChange(text, cut) };
  const written = wholeDocument(text, device);
  if (written === undefined || JSON.stringify(devicesOf(written)) !== expected) return { ok: false, problems: [{ field: 'site', kind: 'invalid', message: 'the device could not be added to this file\'s layout: add it on the site-file page' }] };
  return { ok: true, text: written, change: textChange(text, written) };
}
