// The leaves of the `gateway` schema (schema.ts): formats that throw a message phrased to follow
// "<path>: ", and the shapes of optional strings and bounded numbers.
import { LOG_LEVELS } from '../logger.js';
import { isListenAddress } from './web-settings.js';

/** A format that throws with a message phrased to follow "<path>: ". Never echo the value: it may be secret. */
export type Check = (value: unknown) => void;

export function check(ok: (value: unknown) => boolean, message: string): Check {
  return (value) => {
    if (!ok(value)) throw new Error(message);
  };
}

export const formats = {
  nonEmptyString: check((v) => typeof v === 'string' && v.length > 0, 'must be a non-empty string'),
  optionalString: check((v) => typeof v === 'string', 'must be a string'),
  directoryList: check((v) => Array.isArray(v) && v.length <= 16 && v.every((d) => typeof d === 'string' && d.length > 0), 'must be a list of at most 16 directory paths'),
  boolean: check((v) => typeof v === 'boolean', 'must be true or false'),
  port: check((v) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65535, 'must be a port number 1..65535'),
  portOrOff: check((v) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 65535, 'must be a port number 1..65535 (0 = off)'),
  listenAddress: check(isListenAddress, 'must be an IPv4 or IPv6 address to listen on'),
  logLevel: check((v) => (LOG_LEVELS as readonly unknown[]).includes(v), `must be one of ${LOG_LEVELS.join(', ')}`),
  loopback: check((v) => v === '127.0.0.1', 'must be 127.0.0.1, the health endpoint listens on loopback only'),
  /** '' (not configured) or a URL with one of the given protocols. */
  url(protocols: readonly string[]): Check {
    return check((v) => {
      if (v === '') return true;
      if (typeof v !== 'string' || !URL.canParse(v)) return false;
      return protocols.includes(new URL(v).protocol.replace(/:$/, ''));
    }, `must be a URL starting with ${protocols.map((p) => `${p}://`).join(' or ')}`);
  },
};

/** Unset cloud strings default to '' and come out of gatewayFrom() as absent keys. */
export function cloudString(doc: string, extra: { env?: string; sensitive?: boolean; format?: Check } = {}) {
  return { doc, default: '', format: extra.format ?? formats.optionalString, ...extra };
}

export function cloudNumber(doc: string, fallback: number, min: number, max: number, env?: string) {
  const format = check((v) => typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max, `must be a number ${min}..${max}`);
  return { doc, default: fallback, format, ...(env ? { env } : {}) };
}

export function cloudInteger(doc: string, fallback: number, min: number, max: number) {
  const format = check((v) => Number.isInteger(v) && (v as number) >= min && (v as number) <= max, `must be an integer ${min}..${max}`);
  return { doc, default: fallback, format };
}
