// Topic names and payload shapes of the device channel (docs/protocol.md §3). Pure.
// The broker scopes every topic to the logged-in device, so topics carry no device prefix.

export const TOPIC = {
  attributes: 'attributes',
  attributesPush: 'attributes/push',
  commandSend: 'command/send/+',
  attributesGetResponse: 'attributes/get/response/+',
} as const;

const COMMAND_SEND_PREFIX = 'command/send/';
const GET_RESPONSE_PREFIX = 'attributes/get/response/';
const DATA_PREFIX = 'data/';
const DATA_SET_SUFFIX = '/set';

/** Default cap on an inbound payload; anything larger is answered as invalid, never parsed. */
export const DEFAULT_MAX_INBOUND_BYTES = 256 * 1024;
/** Default cap on the keys of one push or command (params keys, or entries of a `read` list). */
export const DEFAULT_MAX_INBOUND_KEYS = 1000;

/** A stream identifier or request id becomes one topic level: no separators or wildcards. */
export function isValidTopicLevel(level: string): boolean {
  return level.length > 0 && level.length <= 128 && !/[/+#\u0000]/.test(level);
}

export function dataTopic(identifier: string): string {
  return `${DATA_PREFIX}${identifier}`;
}

export function dataSetTopic(identifier: string): string {
  return `${DATA_PREFIX}${identifier}${DATA_SET_SUFFIX}`;
}

export function commandReplyTopic(id: number | string): string {
  return `command/reply/${id}`;
}

export function attributesGetTopic(id: number | string): string {
  return `attributes/get/${id}`;
}

/** Every subscription a device link needs (renewed after each reconnect). */
export function subscriptionTopics(streams: readonly string[]): string[] {
  return [TOPIC.attributesPush, TOPIC.commandSend, TOPIC.attributesGetResponse, ...streams.map(dataSetTopic)];
}

export type JsonObject = Record<string, unknown>;

export interface InboundCommand {
  kind: 'command';
  method: string;
  params: JsonObject;
  /** Echoed in the reply payload and topic (the cloud matches either). */
  id: number;
  topicId: string;
}

export type Inbound =
  | { kind: 'attributes-push'; attributes: JsonObject }
  | InboundCommand
  | { kind: 'attributes-get-response'; topicId: string; ok: boolean; attributes: JsonObject; errcode?: number; message?: string }
  | { kind: 'data-set'; identifier: string; bytes: Buffer }
  | InboundInvalid;

export interface InboundInvalid {
  kind: 'invalid';
  topic: string;
  reason: string;
  /** Present for a malformed command, so it can still be answered with an error. */
  command?: { id: number; topicId: string; method: string };
  /** The keys of a push refused whole (too many): the cloud stored their values anyway. */
  pushKeys?: string[];
}

export interface ParseOptions {
  /** Configured custom data stream identifiers (for `data/<identifier>/set`). */
  streams: ReadonlySet<string> | readonly string[];
  maxPayloadBytes?: number;
  /** More keys than this in one push or command refuse the whole message. */
  maxKeys?: number;
}

function invalid(topic: string, reason: string, command?: InboundInvalid['command']): InboundInvalid {
  return command ? { kind: 'invalid', topic, reason, command } : { kind: 'invalid', topic, reason };
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export type JsonResult = { ok: true; value: JsonObject } | { ok: false; reason: string };

export function parseJsonObject(payload: Buffer): JsonResult {
  let value: unknown;
  try {
    value = JSON.parse(payload.toString('utf8'));
  } catch {
    return { ok: false, reason: 'payload is not valid JSON' };
  }
  if (!isJsonObject(value)) {
    return { ok: false, reason: `payload must be a JSON object, got ${Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value}` };
  }
  return { ok: true, value };
}

/** Request ids are integers; the SDKs also put them in the topic as decimal text. */
export function parseId(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && /^\d{1,15}$/.test(value)) return Number(value);
  return undefined;
}

function ownKeyCount(body: JsonObject): number {
  return Object.keys(body).length;
}

/** Keys a command asks to touch: its params' keys, a `keys` list counting by its entries. */
export function paramKeyCount(params: JsonObject): number {
  const count = ownKeyCount(params);
  return Array.isArray(params.keys) ? count - 1 + params.keys.length : count;
}

export function tooManyKeys(count: number, cap: number): string {
  return `message has ${count} keys, more than the limit of ${cap}`;
}

/**
 * A command body `{"id","method","params"}`, checked the same way whichever topic carried it.
 * `topicId` is the id in the topic (`command/send/<id>`); gateway commands have none.
 */
export function commandFromBody(topic: string, body: JsonObject, maxKeys: number, topicId?: string): Inbound {
  const topicNumber = topicId === undefined ? undefined : parseId(topicId);
  const method = typeof body.method === 'string' ? body.method : '';
  const id = body.id === undefined ? topicNumber : parseId(body.id);
  if (id === undefined) {
    return invalid(topic, 'command id must be a non-negative integer', topicNumber === undefined ? undefined : { id: topicNumber, topicId: topicId ?? '', method });
  }
  const answerable = { id, topicId: topicId ?? String(id), method };
  if (method.length === 0) return invalid(topic, 'command method must be a non-empty string', answerable);
  if (body.params !== undefined && !isJsonObject(body.params)) {
    return invalid(topic, 'command params must be a JSON object', answerable);
  }
  if (body.params !== undefined && paramKeyCount(body.params) > maxKeys) {
    return invalid(topic, tooManyKeys(paramKeyCount(body.params), maxKeys), answerable);
  }
  return { kind: 'command', method, params: body.params === undefined ? {} : body.params as JsonObject, id, topicId: answerable.topicId };
}

function parseCommand(topic: string, topicId: string, payload: Buffer, maxKeys: number): Inbound {
  const json = parseJsonObject(payload);
  if (json.ok) return commandFromBody(topic, json.value, maxKeys, topicId);
  const topicNumber = parseId(topicId);
  return invalid(topic, json.reason, topicNumber === undefined ? undefined : { id: topicNumber, topicId, method: '' });
}

function parseGetResponse(topic: string, topicId: string, payload: Buffer): Inbound {
  const json = parseJsonObject(payload);
  if (!json.ok) return invalid(topic, json.reason);
  const body = json.value;
  const ok = body.result === 1 || body.result === true;
  if (body.attributes !== undefined && !isJsonObject(body.attributes)) {
    return invalid(topic, 'attributes must be a JSON object');
  }
  const response: Inbound = { kind: 'attributes-get-response', topicId, ok, attributes: (body.attributes as JsonObject | undefined) ?? {} };
  if (typeof body.errcode === 'number') response.errcode = body.errcode;
  if (typeof body.message === 'string') response.message = body.message;
  return response;
}

/** Classify one inbound message. Never throws: anything unusable comes back as `invalid` with a reason. */
export function parseInbound(topic: string, payload: Buffer, options: ParseOptions): Inbound {
  const cap = options.maxPayloadBytes ?? DEFAULT_MAX_INBOUND_BYTES;
  if (payload.length > cap) return invalidBySize(topic, payload.length, cap, payload);
  const maxKeys = options.maxKeys ?? DEFAULT_MAX_INBOUND_KEYS;
  if (topic === TOPIC.attributesPush) {
    const json = parseJsonObject(payload);
    if (!json.ok) return invalid(topic, json.reason);
    const keys = Object.keys(json.value);
    if (keys.length <= maxKeys) return { kind: 'attributes-push', attributes: json.value };
    return { ...invalid(topic, tooManyKeys(keys.length, maxKeys)), pushKeys: keys };
  }
  if (topic.startsWith(COMMAND_SEND_PREFIX)) {
    const topicId = topic.slice(COMMAND_SEND_PREFIX.length);
    if (!isValidTopicLevel(topicId)) return invalid(topic, 'command topic has no request id');
    return parseCommand(topic, topicId, payload, maxKeys);
  }
  if (topic.startsWith(GET_RESPONSE_PREFIX)) {
    const topicId = topic.slice(GET_RESPONSE_PREFIX.length);
    if (!isValidTopicLevel(topicId)) return invalid(topic, 'response topic has no request id');
    return parseGetResponse(topic, topicId, payload);
  }
  if (topic.startsWith(DATA_PREFIX) && topic.endsWith(DATA_SET_SUFFIX)) {
    const identifier = topic.slice(DATA_PREFIX.length, -DATA_SET_SUFFIX.length);
    const streams = options.streams;
    const known = Array.isArray(streams) ? streams.includes(identifier) : (streams as ReadonlySet<string>).has(identifier);
    if (!known) return invalid(topic, `unknown data stream "${identifier}"`);
    return { kind: 'data-set', identifier, bytes: payload };
  }
  return invalid(topic, 'unexpected topic');
}

/** A method name leading a command body (`{"method":"site_apply",...`), read from its first bytes only. */
const LEADING_METHOD = /^\s*\{\s*"method"\s*:\s*"([A-Za-z0-9_.-]{1,64})"/;

function invalidBySize(topic: string, size: number, cap: number, payload: Buffer): InboundInvalid {
  const reason = `payload of ${size} bytes exceeds the ${cap} byte limit`;
  // A huge command still deserves an answer; its topic id is trusted, and a method leading the
  // body is named in the reply so a cloud waiting for that method's reply (command/sync/send) gets it.
  if (topic.startsWith(COMMAND_SEND_PREFIX)) {
    const topicId = topic.slice(COMMAND_SEND_PREFIX.length);
    const id = parseId(topicId);
    const method = LEADING_METHOD.exec(payload.subarray(0, 256).toString('latin1'))?.[1] ?? '';
    if (id !== undefined) return invalid(topic, reason, { id, topicId, method });
  }
  return invalid(topic, reason);
}

export interface OutboundMessage {
  topic: string;
  payload: Buffer;
}

export interface CommandErrorBody {
  code: number | string;
  message: string;
}

/** Reply on `command/reply/<id>` with the command's method and id; `params` holds the result. */
export function commandReply(
  command: { id: number; method: string },
  result: { params: JsonObject } | { error: CommandErrorBody },
): OutboundMessage {
  const params = 'error' in result ? { error: result.error } : result.params;
  return {
    topic: commandReplyTopic(command.id),
    payload: Buffer.from(JSON.stringify({ method: command.method, params, id: command.id })),
  };
}

export type ReportValue = number | string | boolean | JsonObject;

/**
 * A flat `attributes` report. Non-finite numbers are left out: JSON would turn them into null,
 * which the cloud would store as a (false) value.
 */
export function attributesReport(values: Readonly<Record<string, ReportValue>>): Buffer {
  // Built once per poll cycle: copy only when there is something to leave out.
  let clean: Record<string, ReportValue> | undefined;
  for (const key in values) {
    const value = values[key];
    if (typeof value === 'number' && !Number.isFinite(value)) {
      clean ??= { ...values };
      delete clean[key];
    }
  }
  return Buffer.from(JSON.stringify(clean ?? values));
}

/** `attributes/get/<id>`: all attributes, or only `keys`. */
export function attributesGetRequest(id: number, keys?: readonly string[]): OutboundMessage {
  const body = keys === undefined ? {} : { keys: [...keys] };
  return { topic: attributesGetTopic(id), payload: Buffer.from(JSON.stringify(body)) };
}
