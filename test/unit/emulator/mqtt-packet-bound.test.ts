// The MQTT packet size bound's header scanner: real packets of every size up to the bound pass
// however they are chunked; a header announcing more is refused as soon as its length says so.
import mqttPacket from 'mqtt-packet';
import { describe, expect, it } from 'vitest';
import { PacketSizeScanner } from '../../../packages/emulator/src/mqtt-packet-bound.js';

const MAX = 1000;

function publish(payloadBytes: number): Buffer {
  return mqttPacket.generate({ cmd: 'publish', topic: 't', payload: Buffer.alloc(payloadBytes, 0x61), qos: 0, retain: false, dup: false });
}

/** Remaining length of `publish(n)`: 2-byte topic length + 1-byte topic + payload. */
const overhead = 3;

describe('PacketSizeScanner', () => {
  const stream = Buffer.concat([
    mqttPacket.generate({ cmd: 'connect', protocolId: 'MQTT', protocolVersion: 4, clean: true, clientId: 'c', keepalive: 30, username: 'u', password: Buffer.from('p') }),
    mqttPacket.generate({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 'a/+/b', qos: 0 }] }),
    mqttPacket.generate({ cmd: 'pingreq' }),
    publish(0), publish(127), publish(128), publish(MAX - overhead),
    mqttPacket.generate({ cmd: 'disconnect' }),
  ]);

  it('passes a stream of packets up to the bound, in one chunk or byte by byte', () => {
    expect(new PacketSizeScanner(MAX).push(stream)).toEqual({ ok: true });
    const bytewise = new PacketSizeScanner(MAX);
    for (let i = 0; i < stream.length; i += 1) expect(bytewise.push(stream.subarray(i, i + 1))).toEqual({ ok: true });
    // Still in step afterwards: the next oversized header is seen.
    expect(bytewise.push(publish(MAX))).toMatchObject({ ok: false, reason: 'too large' });
  });

  it('refuses a packet one byte over, after good ones, with the announced length', () => {
    const scanner = new PacketSizeScanner(MAX);
    expect(scanner.push(publish(10))).toEqual({ ok: true });
    expect(scanner.push(publish(MAX - overhead + 1))).toEqual({ ok: false, reason: 'too large', announced: MAX + 1 });
  });

  it('refuses the largest announced length (256 MiB) at its second length byte, before any body', () => {
    const scanner = new PacketSizeScanner(MAX);
    expect(scanner.push(Buffer.from([0x30, 0xff]))).toEqual({ ok: true });
    expect(scanner.push(Buffer.from([0xff]))).toEqual({ ok: false, reason: 'too large', announced: 127 + 127 * 128 });
  });

  it('refuses a CONNECT header announcing too much, split across chunks', () => {
    const scanner = new PacketSizeScanner(MAX);
    expect(scanner.push(Buffer.from([0x10]))).toEqual({ ok: true });
    expect(scanner.push(Buffer.from([0x80 | 0x69]))).toEqual({ ok: true });
    expect(scanner.push(Buffer.from([0x07]))).toEqual({ ok: false, reason: 'too large', announced: 0x69 + 7 * 128 });
  });

  it('refuses a length of more than four bytes as malformed', () => {
    const scanner = new PacketSizeScanner(Number.MAX_SAFE_INTEGER);
    expect(scanner.push(Buffer.from([0x30, 0x80, 0x80, 0x80, 0x80, 0x01]))).toEqual({ ok: false, reason: 'malformed length' });
  });
});
