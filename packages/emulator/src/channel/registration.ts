// TCP stream registration (docs/protocol.md §6), pure: the first bytes of a socket are
// `<project_key>&<access_token>` with no terminator, so the end of the token is found by asking
// the directory about each candidate length (shortest first); bytes after it are stream data.

const AMPERSAND = 0x26;
const CR = 0x0d;
const LF = 0x0a;

/** Longest registration string looked at before the socket is refused. */
export const MAX_REGISTRATION_BYTES = 1024;

export type Authenticate = (accessToken: string, projectKey: string) => string | undefined;

export type RegistrationResult =
  | { status: 'incomplete' }
  | { status: 'refused'; reason: string }
  /** `consumed` bytes were the registration string; the rest of the buffer is stream data. */
  | { status: 'registered'; deviceId: string; consumed: number };

export function parseRegistration(buffer: Buffer, authenticate: Authenticate): RegistrationResult {
  const ampersand = buffer.indexOf(AMPERSAND);
  if (ampersand < 0) {
    return buffer.length > MAX_REGISTRATION_BYTES
      ? { status: 'refused', reason: 'no registration string' }
      : { status: 'incomplete' };
  }
  const projectKey = buffer.subarray(0, ampersand).toString('utf8');
  const limit = Math.min(buffer.length, ampersand + 1 + MAX_REGISTRATION_BYTES);
  for (let end = ampersand + 2; end <= limit; end += 1) {
    const last = buffer[end - 1];
    if (last === CR || last === LF) {
      // A line end closes the registration string: nothing before it matched.
      return { status: 'refused', reason: 'unknown credentials' };
    }
    const deviceId = authenticate(buffer.subarray(ampersand + 1, end).toString('utf8'), projectKey);
    if (deviceId !== undefined) return { status: 'registered', deviceId, consumed: end };
  }
  return buffer.length - ampersand - 1 >= MAX_REGISTRATION_BYTES
    ? { status: 'refused', reason: 'unknown credentials' }
    : { status: 'incomplete' };
}

/**
 * Drops the optional `\r\n` that may directly follow the registration string, even when it
 * arrives split over chunks. Decided trade-off: a device that registers without a terminator
 * must not begin its stream with `\r\n`.
 */
export class TerminatorFilter {
  private state: 'start' | 'sawCr' | 'done' = 'start';

  push(chunk: Buffer): Buffer {
    if (this.state === 'done' || chunk.length === 0) return chunk;
    if (this.state === 'sawCr') {
      this.state = 'done';
      return chunk[0] === LF ? chunk.subarray(1) : Buffer.concat([Buffer.from([CR]), chunk]);
    }
    if (chunk[0] !== CR) {
      this.state = 'done';
      return chunk;
    }
    if (chunk.length === 1) {
      this.state = 'sawCr';
      return Buffer.alloc(0);
    }
    this.state = 'done';
    return chunk[1] === LF ? chunk.subarray(2) : chunk;
  }
}
