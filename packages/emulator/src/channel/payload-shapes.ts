// Pure shape checks of device payloads (docs/protocol.md §3), shared by the
// direct and the gateway topics. A BadRequest is answered with errcode 400, connection kept.
import type { CommandMessage } from '../channel.js';
import { isPlainObject } from '../http/validate.js';

export class BadRequest extends Error {}

export function requireObject(value: unknown, what: string): Record<string, unknown> {
  if (!isPlainObject(value)) throw new BadRequest(`${what} must be a JSON object`);
  return value;
}

export function requireMethod(body: Record<string, unknown>): string {
  if (typeof body.method !== 'string' || body.method.length === 0) {
    throw new BadRequest('method must be a non-empty string');
  }
  return body.method;
}

export function reportAttributes(value: unknown, what = 'an attributes report'): Record<string, unknown> {
  const attributes = requireObject(value, what);
  for (const [key, item] of Object.entries(attributes)) {
    if (item === null || !['number', 'string', 'boolean', 'object'].includes(typeof item)) {
      throw new BadRequest(`attribute "${key}" must be a number, string, boolean or object`);
    }
  }
  return attributes;
}

export function requestedKeys(value: unknown): string[] | undefined {
  const body = requireObject(value, 'an attributes request');
  if (body.keys === undefined) return undefined;
  if (!Array.isArray(body.keys) || !body.keys.every((key) => typeof key === 'string')) {
    throw new BadRequest('keys must be an array of strings');
  }
  return body.keys as string[];
}

/** The payload id wins; failing that the topic id (docs/protocol.md §3: send both equal). */
export function commandReply(value: unknown, requestId: string | undefined): CommandMessage {
  const body = requireObject(value, 'a command reply');
  const method = requireMethod(body);
  let id: number;
  if (typeof body.id === 'number' && Number.isInteger(body.id)) id = body.id;
  else if (body.id === undefined && requestId !== undefined && /^-?\d+$/.test(requestId)) id = Number(requestId);
  else throw new BadRequest('id must be an integer');
  return { method, params: body.params ?? {}, id };
}

/** What the cloud answers on a response topic (decided shapes, docs/protocol.md §3). */
export type Answer =
  | { result: 1; [key: string]: unknown }
  | { result: 0; errcode: number; message: string; [key: string]: unknown };
