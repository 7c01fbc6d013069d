// Device codes (labels, QR codes): short, stable for a given device id, unique in the state.
import { createHash } from 'node:crypto';

/** Crockford base32: no I, L, O or U, so a printed code reads back unambiguously. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
export const DEVICE_CODE_LENGTH = 12;

function encode(digest: Buffer): string {
  let out = '';
  for (let i = 0; i < DEVICE_CODE_LENGTH; i += 1) out += ALPHABET[digest[i] % ALPHABET.length];
  return out;
}

/** Derived from the device id alone (same seed, same codes); re-hashed while `taken` holds it. */
export function deviceCodeFor(deviceId: string, taken: ReadonlySet<string>): string {
  for (let attempt = 0; ; attempt += 1) {
    const code = encode(createHash('sha256').update(attempt === 0 ? deviceId : `${deviceId}#${attempt}`).digest());
    if (!taken.has(code)) return code;
  }
}
