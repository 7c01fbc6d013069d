// End to end: a custom data stream sent through interface B reaches a raw device on an RS-485 line
// shared with a polled Modbus unit (socat pty pair), and its reply comes back to the cloud on
// `data/<identifier>`, while the unit's values keep reaching the cloud.
import { afterEach, describe, expect, it } from 'vitest';
import type { RtuBusConfig } from '../../src/core/config/site-types.js';
import { compiledConfig } from '../../src/ops/site-file.js';
import { startGateway } from '../../src/main.js';
import type { GatewayHandle } from '../../src/ops/gateway-handle.js';
import { silentLogger } from '../../src/ops/log.js';
import { startMixedLinePeer, TWO_CHUNK_QUIET_MS, type MixedLinePeer } from '../helpers/mixed-line-peer.js';
import { startPtyPair, type PtyPair } from '../helpers/socat.js';
import { deviceApi, meterDevice, startSite, waitFor, type Site } from './harness.js';

const TOKEN = 'demo-meter-1-token';

describe('custom data stream on a shared RTU line, end to end', () => {
  let site: Site | undefined;
  let pty: PtyPair | undefined;
  let peer: MixedLinePeer | undefined;
  let gateway: GatewayHandle | undefined;
  afterEach(async () => {
    await gateway?.stop();
    await peer?.close();
    await pty?.stop();
    await site?.close();
  });

  it('interface B data/console/set -> RS-485 line -> reply on data/console, polls unaffected', async () => {
    site = await startSite();
    const s = site;
    pty = await startPtyPair();
    peer = await startMixedLinePeer(pty.b, s.sim.simulator);
    const base = s.config([]);
    const line: RtuBusConfig = {
      kind: 'rtu', name: 'rs485', path: pty.a, baudRate: 9600, parity: 'none', dataBits: 8, stopBits: 1, timeoutMs: 500,
      interFrameDelayMs: 5, reconnect: { initialMs: 100, maxMs: 1000, jitter: 0.1 }, cooldown: { afterTimeouts: 3, initialMs: 1000, maxMs: 5000 }, busyRetries: 0,
    };
    const meter = {
      ...meterDevice('meter-1', 1, TOKEN), bus: 'rs485',
      streams: [{ identifier: 'console', target: { kind: 'bus', bus: 'rs485' } as const, quietMs: TWO_CHUNK_QUIET_MS, replyTimeoutMs: 500, maxReplyBytes: 256 }],
    };
    gateway = await startGateway(compiledConfig(base.gateway, { buses: [...base.site.buses, line], devices: [meter] }), { logger: silentLogger(), env: {} });
    await waitFor(async () => ((await deviceApi(s, TOKEN, 'GET', '/attributes')).attributes as Record<string, unknown> | undefined)?.voltage === 230.1 || undefined);

    const sent = await deviceApi(s, TOKEN, 'POST', '/data/console/set?push_mode=mqtt', { type: 'text', msg: 'SHOW 42\n' });
    expect(sent.result).toBe(1);
    const replies = await waitFor(() => {
      const records = [...s.emulator.link.streamLog.values()].flat().filter((r) => r.identifier === 'console');
      return records.length > 0 ? records : undefined;
    });
    expect(replies.map((r) => r.data.toString())).toEqual(['ECHO:SHOW 42\r\n']);
    expect(peer.textLines).toEqual(['SHOW 42']);
    expect(peer.garbage).toEqual([]);

    // The Modbus unit on the same line is still polled and reported.
    s.sim.simulator.setRegister(1, 'input', 0, 2400);
    await waitFor(async () => ((await deviceApi(s, TOKEN, 'GET', '/attributes')).attributes as Record<string, unknown> | undefined)?.voltage === 240 || undefined);
  });
});
