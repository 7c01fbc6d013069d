// The gateway sub-device topics seen from fieldgate (docs/protocol.md §3, gateway mode). Pure.
// Inbound messages are split by sub-device address into the same `Inbound` shapes a device's own
// link produces, so one validation and write/read-back path serves both.
import {
  commandFromBody, isJsonObject, parseJsonObject, tooManyKeys,
  type CommandErrorBody, type Inbound, type InboundInvalid, type JsonObject, type OutboundMessage,
} from './topics.js';

export const GATEWAY_TOPIC = {
  attributes: 'gateway/attributes',
  connect: 'gateway/connect',
  disconnect: 'gateway/disconnect',
  commandReply: 'gateway/command/reply',
  attributesPush: 'gateway/attributes/push',
  commandSend: 'gateway/command/send',
} as const;

/** Answers of the cloud to what the gateway sent: only refusals matter (a PUBACK is delivery). */
export const GATEWAY_RESPONSE_TOPICS = [
  'gateway/attributes/response', 'gateway/connect/response', 'gateway/disconnect/response', 'gateway/command/reply/response',
] as const;

/** Everything the identity's link subscribes to for its sub-devices. */
export const GATEWAY_SUBSCRIPTIONS: readonly string[] = [GATEWAY_TOPIC.attributesPush, GATEWAY_TOPIC.commandSend, ...GATEWAY_RESPONSE_TOPICS];

/** One message for one sub-device, in the shape a direct device's link would have produced. */
export interface RoutedMessage {
  address: string;
  message: Inbound;
}

export type GatewayInbound =
  | { kind: 'routed'; messages: RoutedMessage[] }
  | { kind: 'refusal'; topic: string; errcode: number; reason: string; addresses: string[] }
  | { kind: 'accepted'; topic: string }
  /** Nothing in it names a sub-device that could answer: logged only. */
  | { kind: 'invalid'; topic: string; reason: string };

export interface GatewayParseOptions {
  maxPayloadBytes: number;
  /** Keys of one sub-device's push or command; more refuse that part (as for a direct device). */
  maxKeys: number;
}

function invalidFor(topic: string, reason: string, extra: Partial<InboundInvalid> = {}): Inbound {
  return { kind: 'invalid', topic, reason, ...extra };
}

function pushFor(topic: string, address: string, attributes: unknown, maxKeys: number): RoutedMessage {
  if (!isJsonObject(attributes)) return { address, message: invalidFor(topic, `the attributes of sub-device "${address}" must be a JSON object`) };
  const keys = Object.keys(attributes);
  if (keys.length > maxKeys) return { address, message: invalidFor(topic, tooManyKeys(keys.length, maxKeys), { pushKeys: keys }) };
  return { address, message: { kind: 'attributes-push', attributes } };
}

/** `{"device":"<addr>","attributes":{...}}` exactly; anything else is the `{"<addr>":{...}}` shape. */
function isDeviceShape(body: JsonObject): boolean {
  const keys = Object.keys(body);
  return keys.length === 2 && typeof body.device === 'string' && Object.hasOwn(body, 'attributes');
}

function parsePush(topic: string, body: JsonObject, maxKeys: number): GatewayInbound {
  if (isDeviceShape(body)) {
    const address = body.device as string;
    if (address.length === 0) return { kind: 'invalid', topic, reason: 'device must be a non-empty sub-device address' };
    return { kind: 'routed', messages: [pushFor(topic, address, body.attributes, maxKeys)] };
  }
  const messages: RoutedMessage[] = [];
  for (const address of Object.keys(body)) {
    if (address.length === 0) return { kind: 'invalid', topic, reason: 'a sub-device address must not be empty' };
    messages.push(pushFor(topic, address, body[address], maxKeys));
  }
  return { kind: 'routed', messages };
}

function parseCommand(topic: string, body: JsonObject, maxKeys: number): GatewayInbound {
  if (typeof body.device !== 'string' || body.device.length === 0) {
    return { kind: 'invalid', topic, reason: 'device must be a non-empty sub-device address' };
  }
  const address = body.device;
  const routed = (message: Inbound): GatewayInbound => ({ kind: 'routed', messages: [{ address, message }] });
  const command = body.command;
  if (!isJsonObject(command)) return routed(invalidFor(topic, 'command must be a JSON object'));
  return routed(commandFromBody(topic, command, maxKeys));
}

/** Addresses a refusal names that are kept (each matched against the sub-devices, none logged whole). */
export const MAX_REFUSED_ADDRESSES = 10_000;

/** `"a", "b"` quoted in the message: the addresses of a refusal that names them nowhere else. */
function quotedIn(message: string): string[] {
  const found: string[] = [];
  for (const match of message.matchAll(/"((?:[^"\\]|\\.)*)"/g)) {
    try {
      found.push(JSON.parse(match[0]) as string);
    } catch {
      // Not a JSON string: not an address the cloud quoted.
    }
    if (found.length >= MAX_REFUSED_ADDRESSES) break;
  }
  return found;
}

function parseResponse(topic: string, body: JsonObject): GatewayInbound {
  if (body.result === 1 || body.result === true) return { kind: 'accepted', topic };
  const message = typeof body.message === 'string' ? body.message : undefined;
  const addresses = Array.isArray(body.devices) ? body.devices.filter((d): d is string => typeof d === 'string')
    : typeof body.device === 'string' ? [body.device] : message ? quotedIn(message) : [];
  const errcode = typeof body.errcode === 'number' ? body.errcode : 0;
  const reason = message?.slice(0, 200) ?? 'refused';
  // The addresses are matched against the sub-devices; logs show at most 10 of at most 64 characters.
  return { kind: 'refusal', topic, errcode, reason, addresses: addresses.slice(0, MAX_REFUSED_ADDRESSES) };
}

/** Classify one message on the identity's link for its sub-devices. Never throws. */
export function parseGatewayInbound(topic: string, payload: Buffer, options: GatewayParseOptions): GatewayInbound {
  if (payload.length > options.maxPayloadBytes) {
    return { kind: 'invalid', topic, reason: `payload of ${payload.length} bytes exceeds the ${options.maxPayloadBytes} byte limit` };
  }
  const json = parseJsonObject(payload);
  if (!json.ok) return { kind: 'invalid', topic, reason: json.reason };
  if (topic === GATEWAY_TOPIC.attributesPush) return parsePush(topic, json.value, options.maxKeys);
  if (topic === GATEWAY_TOPIC.commandSend) return parseCommand(topic, json.value, options.maxKeys);
  if ((GATEWAY_RESPONSE_TOPICS as readonly string[]).includes(topic)) return parseResponse(topic, json.value);
  return { kind: 'invalid', topic, reason: 'unexpected topic' };
}

/** A sub-device's command reply: `{"device":"<addr>","command":{"id","method","params"}}`. */
export function gatewayCommandReply(
  address: string,
  command: { id: number; method: string },
  result: { params: JsonObject } | { error: CommandErrorBody },
): OutboundMessage {
  const params = 'error' in result ? { error: result.error } : result.params;
  const body = { device: address, command: { id: command.id, method: command.method, params } };
  return { topic: GATEWAY_TOPIC.commandReply, payload: Buffer.from(JSON.stringify(body)) };
}

/** `gateway/connect` or `gateway/disconnect` for one sub-device. */
export function gatewayPresence(address: string, online: boolean): OutboundMessage {
  return { topic: online ? GATEWAY_TOPIC.connect : GATEWAY_TOPIC.disconnect, payload: Buffer.from(JSON.stringify({ device: address })) };
}
