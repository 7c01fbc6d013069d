// Pure part of the gateway sub-device protocol (docs/protocol.md §3, gateway mode): which `gateway/*`
// topics a gateway may publish, where each is answered, and the shape of each payload.
import type { CommandMessage } from '../channel.js';
import { isPlainObject } from '../http/validate.js';
import { BadRequest, commandReply, reportAttributes, requestedKeys, requireMethod, requireObject } from './payload-shapes.js';

export type GatewayUplinkKind = 'report' | 'connect' | 'disconnect' | 'event' | 'attributesGet' | 'commandReply';

const UPLINK_TOPICS: Record<string, GatewayUplinkKind> = {
  'gateway/attributes': 'report',
  'gateway/connect': 'connect',
  'gateway/disconnect': 'disconnect',
  'gateway/event/report': 'event',
  'gateway/attributes/get': 'attributesGet',
  'gateway/command/reply': 'commandReply',
};

/** Response topics; those of connect, disconnect and command reply are decided (spec silent). */
const RESPONSE_TOPICS: Record<GatewayUplinkKind, string> = {
  report: 'gateway/attributes/response',
  connect: 'gateway/connect/response',
  disconnect: 'gateway/disconnect/response',
  event: 'gateway/event/response',
  attributesGet: 'gateway/attributes/get/response',
  commandReply: 'gateway/command/reply/response',
};

export const GATEWAY_PUSH_TOPIC = 'gateway/attributes/push';
export const GATEWAY_COMMAND_TOPIC = 'gateway/command/send';

export function classifyGatewayUplink(topic: string): GatewayUplinkKind | undefined {
  return Object.hasOwn(UPLINK_TOPICS, topic) ? UPLINK_TOPICS[topic] : undefined;
}

export function gatewayResponseTopic(kind: GatewayUplinkKind): string {
  return RESPONSE_TOPICS[kind];
}

export type GatewayMessage =
  | { kind: 'report'; entries: [addr: string, attributes: Record<string, unknown>][] }
  | { kind: 'connect' | 'disconnect'; addr: string }
  | { kind: 'event'; addr: string; event: { method: string; params: unknown } }
  | { kind: 'attributesGet'; addr: string; keys: string[] | undefined }
  | { kind: 'commandReply'; addr: string; reply: CommandMessage };

function requireAddr(body: Record<string, unknown>): string {
  if (typeof body.device !== 'string' || body.device.length === 0) {
    throw new BadRequest('device must be a non-empty string (the sub-device address)');
  }
  return body.device;
}

/**
 * Checks a parsed payload of a gateway topic; `text` is its JSON text, scanned for duplicated
 * addresses that JSON.parse would silently merge (a lost report must never look delivered).
 */
export function parseGatewayMessage(kind: GatewayUplinkKind, value: unknown, text: string): GatewayMessage {
  if (kind === 'report') {
    const batch = requireObject(value, 'a gateway report');
    const duplicate = duplicateTopLevelKey(text);
    if (duplicate !== undefined) throw new BadRequest(`sub-device address "${duplicate}" appears twice in one batch`);
    const entries = Object.entries(batch).map(([addr, attributes]): [string, Record<string, unknown>] => {
      if (addr.length === 0) throw new BadRequest('a sub-device address must not be empty');
      return [addr, reportAttributes(attributes, `the attributes of sub-device "${addr}"`)];
    });
    return { kind, entries };
  }
  const body = requireObject(value, 'a gateway message');
  const addr = requireAddr(body);
  switch (kind) {
    case 'connect':
    case 'disconnect':
      return { kind, addr };
    case 'event': {
      const event = requireObject(body.event, 'event');
      return { kind, addr, event: { method: requireMethod(event), params: event.params ?? {} } };
    }
    case 'attributesGet':
      return { kind, addr, keys: requestedKeys(body) };
    case 'commandReply':
      return { kind, addr, reply: commandReply(body.command, undefined) };
  }
}

/** The sub-device address a gateway message names, read leniently for an error answer. */
export function addressOf(value: unknown): string | undefined {
  return isPlainObject(value) && typeof value.device === 'string' ? value.device : undefined;
}

/** The first key named twice in the outermost object of valid JSON `text`, if any. */
export function duplicateTopLevelKey(text: string): string | undefined {
  const seen = new Set<string>();
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (c === '"') {
      const start = i;
      for (i += 1; text[i] !== '"'; i += 1) if (text[i] === '\\') i += 1;
      if (depth === 1 && expectKey) {
        const key = JSON.parse(text.slice(start, i + 1)) as string;
        if (seen.has(key)) return key;
        seen.add(key);
        expectKey = false;
      }
    } else if (c === '{' || c === '[') {
      depth += 1;
      expectKey = depth === 1 && c === '{';
    } else if (c === '}' || c === ']') {
      depth -= 1;
    } else if (c === ',' && depth === 1) {
      expectKey = true;
    }
  }
  return undefined;
}

/** Both shapes of `gateway/attributes/push` are documented; a gateway must accept either. */
export type GatewayPushShape = 'keyed' | 'device';

export function gatewayPushPayload(shape: GatewayPushShape, addr: string, values: Record<string, unknown>): Record<string, unknown> {
  return shape === 'keyed' ? { [addr]: values } : { device: addr, attributes: values };
}

export function gatewayCommandPayload(addr: string, command: CommandMessage): Record<string, unknown> {
  return { device: addr, command: { id: command.id, method: command.method, params: command.params } };
}
