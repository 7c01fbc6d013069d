// Wire time of Modbus RTU on a real serial line (pure). Used by the baud-accurate simulator and the bench.
import type { Parity } from 'fieldgate/workspace-kit';

export interface LineSettings {
  baud: number;
  parity: Parity;
  dataBits: number;
  stopBits: number;
}

export interface LineTiming {
  settings: LineSettings;
  /** 1 start + data + parity (0/1) + stop. */
  bitsPerChar: number;
  /** Time one character occupies on the line, µs. */
  charMicros: number;
  /** Inter-frame silence: 3.5 character times, fixed 1750 µs above 19200 baud. */
  t35Micros: number;
  /** Wire time of a frame of `bytes` characters, µs. */
  frameMicros(bytes: number): number;
  /** From the first request byte to the last reply byte: request + t3.5 + reply, µs. */
  replyDoneMicros(requestBytes: number, responseBytes: number): number;
  /**
   * One full transaction cycle on the line, µs: request + t3.5 + reply + t3.5 (the silence
   * after the reply must pass before the next request may start). Back-to-back transactions
   * can never be faster than this.
   */
  transactionMicros(requestBytes: number, responseBytes: number): number;
  /** Human-readable formula with the numbers filled in (printed by the bench). */
  describe(): string;
}

/** Above this baud rate the standard fixes t3.5 at 1.75 ms instead of 3.5 character times. */
const FIXED_SILENCE_ABOVE_BAUD = 19200;
const FIXED_T35_MICROS = 1750;

export function validateLineSettings(settings: LineSettings): string[] {
  const problems: string[] = [];
  if (!Number.isFinite(settings.baud) || settings.baud <= 0) problems.push(`baud must be a positive number, got ${settings.baud}`);
  if (!['none', 'even', 'odd'].includes(settings.parity)) problems.push(`parity must be none, even or odd, got "${settings.parity}"`);
  if (settings.dataBits !== 7 && settings.dataBits !== 8) problems.push(`data bits must be 7 or 8, got ${settings.dataBits}`);
  if (settings.stopBits !== 1 && settings.stopBits !== 2) problems.push(`stop bits must be 1 or 2, got ${settings.stopBits}`);
  return problems;
}

export function lineTiming(settings: LineSettings): LineTiming {
  const problems = validateLineSettings(settings);
  if (problems.length > 0) throw new RangeError(problems.join('; '));
  const bitsPerChar = 1 + settings.dataBits + (settings.parity === 'none' ? 0 : 1) + settings.stopBits;
  const charMicros = (bitsPerChar / settings.baud) * 1e6;
  const t35Micros = settings.baud > FIXED_SILENCE_ABOVE_BAUD ? FIXED_T35_MICROS : 3.5 * charMicros;
  const frameMicros = (bytes: number) => bytes * charMicros;
  const replyDoneMicros = (req: number, resp: number) => frameMicros(req) + t35Micros + frameMicros(resp);
  const transactionMicros = (req: number, resp: number) => replyDoneMicros(req, resp) + t35Micros;
  const parityLetter = settings.parity === 'none' ? 'N' : settings.parity === 'even' ? 'E' : 'O';
  const describe = () =>
    `${settings.baud} ${settings.dataBits}${parityLetter}${settings.stopBits}: ` +
    `char = ${bitsPerChar} bits / ${settings.baud} baud = ${charMicros.toFixed(1)} µs; ` +
    `t3.5 = ${t35Micros.toFixed(1)} µs; ` +
    `transaction = (request bytes + reply bytes) × char + 2 × t3.5`;
  return { settings, bitsPerChar, charMicros, t35Micros, frameMicros, replyDoneMicros, transactionMicros, describe };
}

/** Convenience for callers that only need the cycle time. */
export function transactionMicros(settings: LineSettings, requestBytes: number, responseBytes: number): number {
  return lineTiming(settings).transactionMicros(requestBytes, responseBytes);
}
