// App-side subscription topics and payloads (docs/protocol.md, "App-side subscription"): pure.
// Documented by the cloud: `<ProjectViewKey>/<DeviceViewToken>/attributes` (or `+` for every
// device) carrying `{"attributes": {...}, "device": {"id": ..., ...}}`. The other kinds' topic
// words and payloads are the emulator's decisions, recorded in docs/protocol.md.
import type { DeviceRecord } from '../state/model.js';

/** Every kind of message the app side carries, as the last topic level. */
export const APP_KINDS = ['attributes', 'event', 'command_reply', 'data', 'online'] as const;
export type AppKind = (typeof APP_KINDS)[number];

/** What changed an attribute: a device report, a push to the device, or a cloud-side update. */
export type AttributeSource = 'report' | 'push' | 'cloud';

export type FilterVerdict =
  | { ok: true; device: string | undefined; kind: AppKind }
  | { ok: false; reason: string };

function isKind(word: string): word is AppKind {
  return (APP_KINDS as readonly string[]).includes(word);
}

/**
 * A subscription filter an app session may hold: exactly `<viewKey>/<token>/<kind>` or
 * `<viewKey>/+/<kind>`. `device` is the DeviceViewToken, undefined for `+`. No `#`, no other
 * wildcard position: the app side is read-only and scoped to its project.
 */
export function checkAppFilter(viewKey: string, filter: string): FilterVerdict {
  const levels = filter.split('/');
  if (levels.length !== 3) return { ok: false, reason: 'filter must be <ProjectViewKey>/<DeviceViewToken or +>/<kind>' };
  const [key, device, kind] = levels as [string, string, string];
  if (key !== viewKey) return { ok: false, reason: 'filter outside the project' };
  if (!isKind(kind)) return { ok: false, reason: `unknown message kind "${kind}"` };
  if (device === '+') return { ok: true, device: undefined, kind };
  if (device.length === 0 || device.includes('+') || device.includes('#')) {
    return { ok: false, reason: 'device level must be a DeviceViewToken or +' };
  }
  return { ok: true, device, kind };
}

export function appTopic(viewKey: string, viewToken: string, kind: AppKind): string {
  return `${viewKey}/${viewToken}/${kind}`;
}

/** The `device` object every app-side payload carries. */
export function deviceInfo(device: DeviceRecord): Record<string, string> {
  return { id: device.id, name: device.name, type: device.type, device_key: device.device_key };
}

export function attributesPayload(device: DeviceRecord, values: Record<string, unknown>, source: AttributeSource, ts: number): unknown {
  return { attributes: values, device: deviceInfo(device), source, ts };
}

export function eventPayload(device: DeviceRecord, event: { method: string; params: unknown }, topicId: string, ts: number): unknown {
  return { event: { id: topicId, method: event.method, params: event.params }, device: deviceInfo(device), ts };
}

export function commandReplyPayload(device: DeviceRecord, reply: unknown, topicId: string, ts: number): unknown {
  return { command: reply, reply_topic_id: topicId, device: deviceInfo(device), ts };
}

/** Custom data is raw bytes on the device side: base64 here, so any byte survives JSON. */
export function dataPayload(device: DeviceRecord, identifier: string | undefined, data: Buffer, ts: number): unknown {
  return { data: { identifier: identifier ?? null, via: identifier === undefined ? 'tcp' : 'mqtt', base64: data.toString('base64') }, device: deviceInfo(device), ts };
}

export function onlinePayload(device: DeviceRecord, online: boolean, ts: number): unknown {
  return { online, device: deviceInfo(device), ts };
}
