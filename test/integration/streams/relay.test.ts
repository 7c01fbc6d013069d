// Stream relay against real byte targets: a TCP peer and a socat pty pair (raw serial).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SerialPort } from 'serialport';
import { afterEach, describe, expect, it } from 'vitest';
import type { StreamConfig } from '../../../src/core/config/command-types.js';
import { silentLogger } from '../../../src/ops/log.js';
import { systemTimers } from '../../../src/core/time.js';
import { SerialEndpoint } from '../../../src/field/streams/serial-endpoint.js';
import { StreamRelay } from '../../../src/field/streams/relay.js';
import { TcpEndpoint } from '../../../src/field/streams/tcp-endpoint.js';
import { requireProgram } from '../../helpers/peers.js';

async function waitFor(cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const reconnect = { initialMs: 50, maxMs: 200, jitter: 0 };

function streamConfig(target: StreamConfig['target']): StreamConfig {
  return { identifier: 'serial_raw', target, quietMs: 30, replyTimeoutMs: 1000, maxReplyBytes: 4096 };
}

describe('StreamRelay over TCP', () => {
  let server: Server | undefined;
  let relay: StreamRelay | undefined;
  afterEach(async () => {
    await relay?.stop();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  });

  it('sends cloud bytes, publishes the reply as one message after the line goes quiet, and reconnects', async () => {
    const peers: Socket[] = [];
    const received: Buffer[] = [];
    server = createServer((socket) => {
      peers.push(socket);
      socket.on('data', (chunk) => {
        received.push(chunk);
        // Reply in two chunks with a gap shorter than quietMs: still one message.
        socket.write(Buffer.from([0xaa, 0xbb]));
        setTimeout(() => socket.write(Buffer.from([0xcc])), 5);
      });
    });
    await new Promise<void>((r) => server?.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    const published: Array<[string, string]> = [];
    relay = new StreamRelay({
      config: streamConfig({ kind: 'tcp', host: '127.0.0.1', port }),
      endpoint: new TcpEndpoint({ kind: 'tcp', host: '127.0.0.1', port }),
      publish: async (id, data) => void published.push([id, data.toString('hex')]),
      logger: silentLogger(), timers: systemTimers, reconnect,
    });
    relay.start();
    await waitFor(() => relay?.isUp === true);
    await relay.send(Buffer.from([1, 3, 0, 0]));
    await waitFor(() => published.length === 1);
    expect(published[0]).toEqual(['serial_raw', 'aabbcc']);
    expect(Buffer.concat(received).toString('hex')).toBe('01030000');

    // The peer drops: the relay notices, reconnects by itself and works again.
    peers[0].destroy();
    await waitFor(() => relay?.isUp === false);
    await waitFor(() => relay?.isUp === true);
    await relay.send(Buffer.from('hi'));
    await waitFor(() => published.length === 2);
    expect(relay.counters).toMatchObject({ published: 2, dropped: 0 });
  });

  it('refuses to send while the target is down, with the reason', async () => {
    relay = new StreamRelay({
      config: streamConfig({ kind: 'tcp', host: '127.0.0.1', port: 1 }),
      endpoint: new TcpEndpoint({ kind: 'tcp', host: '127.0.0.1', port: 1 }),
      publish: async () => undefined, logger: silentLogger(), timers: systemTimers, reconnect,
    });
    relay.start();
    await expect(relay.send(Buffer.from([1]))).rejects.toThrow('stream serial_raw: target 127.0.0.1:1 is down');
  });
});

describe('StreamRelay over a raw serial port (socat pty pair)', () => {
  let socat: ChildProcess | undefined;
  let dir: string | undefined;
  let relay: StreamRelay | undefined;
  let device: SerialPort | undefined;
  afterEach(async () => {
    await relay?.stop();
    await new Promise<void>((r) => (device?.isOpen ? device.close(() => r()) : r()));
    socat?.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('relays bytes both ways, including data the device sends on its own', async () => {
    dir = mkdtempSync(join(tmpdir(), 'fg-stream-'));
    const gw = join(dir, 'gw');
    const dev = join(dir, 'dev');
    requireProgram('socat');
    socat = spawn('socat', [`pty,raw,echo=0,link=${gw}`, `pty,raw,echo=0,link=${dev}`], { stdio: 'ignore' });
    await waitFor(() => existsSync(gw) && existsSync(dev));
    device = new SerialPort({ path: dev, baudRate: 9600 });
    const deviceGot: Buffer[] = [];
    device.on('data', (c: Buffer) => deviceGot.push(c));
    const target = { kind: 'serial', path: gw, baudRate: 9600, parity: 'none', dataBits: 8, stopBits: 1 } as const;
    const published: string[] = [];
    relay = new StreamRelay({
      config: streamConfig(target), endpoint: new SerialEndpoint(target),
      publish: async (_id, data) => void published.push(data.toString()),
      logger: silentLogger(), timers: systemTimers, reconnect,
    });
    relay.start();
    await waitFor(() => relay?.isUp === true);
    await relay.send(Buffer.from('PING\r\n'));
    await waitFor(() => Buffer.concat(deviceGot).toString() === 'PING\r\n');
    device.write('PONG\r\n');
    await waitFor(() => published.length === 1);
    device.write('ALARM 3\r\n');
    await waitFor(() => published.length === 2);
    expect(published).toEqual(['PONG\r\n', 'ALARM 3\r\n']);
  });
});
