// Bounds on every JSON input (HTTP bodies of both interfaces, device payloads on MQTT): a stored
// value must always serialise again, or every later read of it would fail.

export interface JsonLimits {
  /** Deepest nesting of objects/arrays; a top-level object is depth 1. */
  maxDepth: number;
  /** Largest JSON text in bytes (HTTP body, MQTT payload). */
  maxBytes: number;
}

export const DEFAULT_JSON_LIMITS: JsonLimits = { maxDepth: 64, maxBytes: 1024 * 1024 };

/** Upper end of a configurable depth: JSON.stringify recurses, so far deeper values cannot be sent back. */
export const MAX_CONFIGURABLE_DEPTH = 1000;

export type BoundedJson =
  | { ok: true; value: unknown }
  | { ok: false; problem: 'syntax' | 'depth' | 'size'; message: string };

/** A problem with the limits themselves (CLI flags, options), or undefined. */
export function checkJsonLimits(limits: JsonLimits): string | undefined {
  if (!Number.isInteger(limits.maxDepth) || limits.maxDepth < 1 || limits.maxDepth > MAX_CONFIGURABLE_DEPTH) {
    return `JSON depth limit (--json-max-depth) must be an integer from 1 to ${MAX_CONFIGURABLE_DEPTH}`;
  }
  if (!Number.isInteger(limits.maxBytes) || limits.maxBytes < 2) return 'JSON size limit (--json-max-bytes) must be an integer of at least 2 bytes';
  return undefined;
}

/** Deepest nesting in a JSON text, stopping early once past `stopAbove`. Strings are skipped. */
export function jsonDepth(text: string, stopAbove = Infinity): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i += 1; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      depth += 1;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > stopAbove) return deepest;
      }
    } else if (c === 0x5d || c === 0x7d) {
      depth -= 1;
    }
  }
  return deepest;
}

export function depthMessage(limits: JsonLimits): string {
  return `JSON nested deeper than ${limits.maxDepth} levels`;
}

export function sizeMessage(limits: JsonLimits): string {
  return `JSON larger than ${limits.maxBytes} bytes`;
}

/** Parses `text` (`bytes` long) within the limits. A leading UTF-8 BOM is ignored. */
export function parseBoundedJson(text: string, bytes: number, limits: JsonLimits): BoundedJson {
  if (bytes > limits.maxBytes) return { ok: false, problem: 'size', message: sizeMessage(limits) };
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let value: unknown;
  try {
    value = JSON.parse(body) as unknown;
  } catch {
    return { ok: false, problem: 'syntax', message: 'not valid JSON' };
  }
  // V8 parses any depth; only valid JSON is scanned, so brackets always balance.
  if (jsonDepth(body, limits.maxDepth) > limits.maxDepth) return { ok: false, problem: 'depth', message: depthMessage(limits) };
  return { ok: true, value };
}
