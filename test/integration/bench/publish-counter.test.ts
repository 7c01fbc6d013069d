// The bench's wire count of PUBLISH packets: MQTT fixed headers split out of a byte stream however
// it is chunked (1-, 2- and 3-byte remaining lengths, several packets per chunk, a packet over chunks).
import { describe, expect, it } from 'vitest';
import { PacketSplitter } from '../../bench/publish-counter.js';

const packet = (type: number, bodyLength: number) => {
  const length: number[] = [];
  let n = bodyLength;
  do {
    length.push((n % 128) | (n >= 128 ? 0x80 : 0));
    n = Math.floor(n / 128);
  } while (n > 0);
  return Buffer.concat([Buffer.from([type << 4, ...length]), Buffer.alloc(bodyLength, 0x33)]);
};

describe('PacketSplitter', () => {
  const stream = Buffer.concat([packet(1, 12), packet(3, 5), packet(3, 300), packet(12, 0), packet(3, 20_000)]);
  const cases: [string, number][] = [['one chunk', stream.length], ['byte by byte', 1], ['7-byte chunks', 7], ['1000-byte chunks', 1000]];
  it.each(cases)('%s', (_label, size) => {
    const seen: [number, number][] = [];
    const splitter = new PacketSplitter((type, bytes) => seen.push([type, bytes]));
    for (let i = 0; i < stream.length; i += size) splitter.push(stream.subarray(i, i + size));
    expect(seen).toEqual([[1, 14], [3, 7], [3, 303], [12, 2], [3, 20_004]]);
  });

  it('refuses a remaining length longer than four bytes', () => {
    const splitter = new PacketSplitter(() => undefined);
    expect(() => splitter.push(Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff, 0x01]))).toThrow(/remaining length/);
  });
});
