import { describe, expect, it } from 'vitest';
import { lineTiming, transactionMicros, validateLineSettings } from '../../../packages/simulator/src/timing.js';

describe('lineTiming', () => {
  it.each([
    // baud, parity, data, stop, bits/char, char µs, t3.5 µs
    [9600, 'even', 8, 1, 11, 1145.833, 4010.417],
    [9600, 'none', 8, 1, 10, 1041.667, 3645.833],
    [9600, 'none', 8, 2, 11, 1145.833, 4010.417],
    [19200, 'even', 8, 1, 11, 572.917, 2005.208],
    [38400, 'even', 8, 1, 11, 286.458, 1750],
    [115200, 'even', 8, 1, 11, 95.486, 1750],
    [115200, 'odd', 7, 2, 11, 95.486, 1750],
  ] as const)('%i %s %i/%i', (baud, parity, dataBits, stopBits, bits, charUs, t35Us) => {
    const t = lineTiming({ baud, parity, dataBits, stopBits });
    expect(t.bitsPerChar).toBe(bits);
    expect(t.charMicros).toBeCloseTo(charUs, 2);
    expect(t.t35Micros).toBeCloseTo(t35Us, 2);
  });

  it('a read of 10 registers at 9600 8E1: 8-byte request, 25-byte reply, two silences', () => {
    const t = lineTiming({ baud: 9600, parity: 'even', dataBits: 8, stopBits: 1 });
    const char = 11 / 9600 * 1e6;
    expect(t.frameMicros(8)).toBeCloseTo(8 * char, 6);
    expect(t.replyDoneMicros(8, 25)).toBeCloseTo(33 * char + 3.5 * char, 6);
    expect(t.transactionMicros(8, 25)).toBeCloseTo(33 * char + 7 * char, 6);
    expect(transactionMicros({ baud: 9600, parity: 'even', dataBits: 8, stopBits: 1 }, 8, 25)).toBeCloseTo(40 * char, 6);
  });

  it('describes the formula with numbers', () => {
    const text = lineTiming({ baud: 115200, parity: 'even', dataBits: 8, stopBits: 1 }).describe();
    expect(text).toContain('115200 8E1');
    expect(text).toContain('t3.5 = 1750.0 µs');
  });

  it.each([
    [{ baud: 0, parity: 'even', dataBits: 8, stopBits: 1 }, 'baud must be a positive number'],
    [{ baud: 9600, parity: 'mark', dataBits: 8, stopBits: 1 }, 'parity must be none, even or odd'],
    [{ baud: 9600, parity: 'even', dataBits: 9, stopBits: 1 }, 'data bits must be 7 or 8'],
    [{ baud: 9600, parity: 'even', dataBits: 8, stopBits: 3 }, 'stop bits must be 1 or 2'],
  ] as const)('rejects %o', (settings, message) => {
    // The cast lets the table carry invalid values on purpose.
    expect(validateLineSettings(settings as Parameters<typeof validateLineSettings>[0]).join()).toContain(message);
    expect(() => lineTiming(settings as Parameters<typeof lineTiming>[0])).toThrow(message);
  });
});
