// A custom data stream on an RS-485 line shared with Modbus (socat pty pair, real serialport and
// modbus-serial): raw exchanges take turns with polls, replies are collected until the line goes
// quiet, and no frame ever overlaps another on the wire.
import { afterEach, describe, expect, it } from 'vitest';
import type { StreamConfig } from '../../../src/core/config/command-types.js';
import { silentLogger } from '../../../src/ops/log.js';
import { Bus } from '../../../src/field/modbus/bus.js';
import { systemTimers } from '../../../src/core/time.js';
import { createModbusTransport } from '../../../src/field/modbus/transport.js';
import { parseSimMap } from '../../../packages/simulator/src/index.js';
import { Simulator } from '../../../packages/simulator/src/simulator.js';
import { BusLineEndpoint } from '../../../src/field/streams/bus-endpoint.js';
import { StreamRelay } from '../../../src/field/streams/relay.js';
import { rtuBusConfig } from '../../helpers/bus-configs.js';
import { startMixedLinePeer, TWO_CHUNK_QUIET_MS, type MixedLinePeer } from '../../helpers/mixed-line-peer.js';
import { startPtyPair, type PtyPair } from '../../helpers/socat.js';
import { waitFor } from '../../helpers/wait.js';

const MAP = 'units:\n  1:\n    size: { holding: 20 }\n    holding:\n      - { start: 0, values: [11, 22, 33, 44] }\n';

describe('custom data stream on a shared RTU line', () => {
  let pty: PtyPair | undefined;
  let peer: MixedLinePeer | undefined;
  let bus: Bus | undefined;
  let relay: StreamRelay | undefined;
  afterEach(async () => {
    await relay?.stop();
    await bus?.stop();
    await peer?.close();
    await pty?.stop();
  });

  async function setUp(stream: Partial<StreamConfig> = {}) {
    pty = await startPtyPair();
    const map = parseSimMap(MAP);
    if (!map.ok) throw new Error(map.problems.join('; '));
    peer = await startMixedLinePeer(pty.b, new Simulator(map.map, { logger: silentLogger() }));
    bus = new Bus({
      config: rtuBusConfig({ path: pty.a, baudRate: 9600, parity: 'none', timeoutMs: 500, interFrameDelayMs: 5 }),
      transportFactory: createModbusTransport, logger: silentLogger(),
    });
    bus.start();
    const config: StreamConfig = { identifier: 'display', target: { kind: 'bus', bus: 'line1' }, quietMs: TWO_CHUNK_QUIET_MS, replyTimeoutMs: 500, maxReplyBytes: 256, ...stream };
    const published: string[] = [];
    relay = new StreamRelay({
      config, endpoint: new BusLineEndpoint(bus, config), logger: silentLogger(), timers: systemTimers,
      publish: async (_id, data) => void published.push(data.toString()), reconnect: { initialMs: 50, maxMs: 200, jitter: 0 },
    });
    relay.start();
    const b = bus;
    await waitFor(async () => (await b.read(1, 'holding', 0, 1).then(() => true, () => false)) || undefined);
    return { bus: b, relay, peer, published };
  }

  it('interleaves raw exchanges with polls; each reply arrives whole, in order, nothing garbled', async () => {
    const { bus: b, relay: r, peer: p, published } = await setUp();
    const polls: Promise<Uint16Array | undefined>[] = [];
    const sends: Promise<void>[] = [];
    for (let i = 0; i < 10; i += 1) {
      for (let k = 0; k < 5; k += 1) polls.push(b.read(1, 'holding', 0, 4).then((block) => block.words));
      sends.push(r.send(Buffer.from(`SHOW ${i}\n`)));
    }
    await Promise.all(sends);
    const blocks = await Promise.all(polls);
    for (const words of blocks) expect(words).toEqual(Uint16Array.from([11, 22, 33, 44]));
    await waitFor(() => published.length === 10 || undefined);
    expect(published).toEqual(Array.from({ length: 10 }, (_, i) => `ECHO:SHOW ${i}\r\n`));
    expect(p.textLines).toEqual(Array.from({ length: 10 }, (_, i) => `SHOW ${i}`));
    expect(p.garbage).toEqual([]);
    expect(b.stats()).toMatchObject({ timeouts: 0, frameErrors: 0, otherErrors: 0 });
  });

  it('publishes nothing for a command the device does not answer, and the line stays usable', async () => {
    const { bus: b, relay: r, published } = await setUp({ replyTimeoutMs: 100 });
    await r.send(Buffer.from([0xff, 0xfe, 0xfd])); // not text, not Modbus: the peer stays silent
    expect((await b.read(1, 'holding', 2, 2)).words).toEqual(Uint16Array.from([33, 44]));
    await r.send(Buffer.from('PING\n'));
    await waitFor(() => published.length === 1 || undefined);
    expect(published).toEqual(['ECHO:PING\r\n']);
  });

  it('refuses raw bytes while the line is down, with the bus\'s reason', async () => {
    const { relay: r } = await setUp();
    await pty?.stop();
    pty = undefined;
    await expect(r.send(Buffer.from('PING\n'))).rejects.toThrow(/bus|port|closed/i);
  });
});
