// A stream reply ends at a silence on the line, not in the process (a raw exchange on a shared
// line, and the relay's message): when the event loop stalls (a busy Pi) past quietMs while the
// rest of a reply already waits in the kernel, the reply must still arrive whole. Real loopback TCP, a peer in its own process that answers in two pieces.
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { exchangeRaw, type RawPort } from '../../../src/field/modbus/raw-exchange.js';
import { systemTimers } from '../../../src/core/time.js';
import { silentLogger } from '../../../src/ops/log.js';
import type { ByteEndpoint } from '../../../src/field/streams/endpoint.js';
import { StreamRelay } from '../../../src/field/streams/relay.js';
import { TcpEndpoint } from '../../../src/field/streams/tcp-endpoint.js';

// Answers every request with "ECH", then 5 ms later "O:<request>\r\n".
const PEER = `
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
print(s.getsockname()[1], flush=True)
c, _ = s.accept(); c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
while True:
    data = c.recv(64)
    if not data: break
    c.sendall(b"ECH"); time.sleep(0.005); c.sendall(b"O:" + data.strip() + b"\\r\\n")
`;

function portOf(socket: Socket): RawPort {
  return {
    write: (data, callback) => socket.write(data, (err) => callback(err ?? null)),
    drain: (callback) => callback(null),
    on: (event, listener) => socket.on(event, listener),
    off: (event, listener) => socket.off(event, listener),
  };
}

function busyFor(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) { /* a stalled event loop */ }
}

async function startPeer(): Promise<{ peer: ChildProcess; port: number }> {
  const peer = spawn('/usr/bin/python3', ['-c', PEER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => peer.stdout?.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
  return { peer, port };
}

/** The relay's endpoint, with the event loop stalled right after the relay took the first chunk of each reply. */
function stallingAfterFirstChunk(inner: ByteEndpoint, stallMs: number): ByteEndpoint {
  let armed = false;
  return {
    target: inner.target, open: () => inner.open(), close: () => inner.close(), onClose: (l) => inner.onClose(l),
    write: (data) => {
      armed = true;
      return inner.write(data);
    },
    onData: (listener) => inner.onData((chunk) => {
      listener(chunk);
      if (armed) busyFor(stallMs);
      armed = false;
    }),
  };
}

describe('raw exchange under an event-loop stall', () => {
  let peer: ChildProcess | undefined;
  let socket: Socket | undefined;
  afterEach(() => {
    socket?.destroy();
    peer?.kill();
  });

  it('a reply whose rest arrived during the stall is not cut at the stall', async () => {
    const started = await startPeer();
    peer = started.peer;
    const port = started.port;
    const s = connect(port, '127.0.0.1');
    socket = s;
    s.setNoDelay(true);
    await new Promise((resolve) => s.once('connect', resolve));
    const window = { quietMs: 30, replyTimeoutMs: 2000, maxReplyBytes: 256 };
    for (let i = 0; i < 5; i += 1) {
      // The first piece stalls the loop for 120 ms: the quiet timer expires while the rest waits unread.
      // (Listening after the exchange does: its quiet timer is armed before the stall.)
      const stall = () => busyFor(120);
      const exchange = exchangeRaw(portOf(s), Buffer.from(`SHOW ${i}\n`), window, systemTimers);
      s.once('data', stall);
      const reply = await exchange;
      s.off('data', stall);
      expect(reply.toString()).toBe(`ECHO:SHOW ${i}\r\n`);
    }
  });

  it('a stream relay publishes such a reply as one message, not cut at the stall', async () => {
    const started = await startPeer();
    peer = started.peer;
    const target = { kind: 'tcp' as const, host: '127.0.0.1', port: started.port };
    const published: string[] = [];
    const relay = new StreamRelay({
      config: { identifier: 'display', target, quietMs: 30, replyTimeoutMs: 2000, maxReplyBytes: 256 },
      endpoint: stallingAfterFirstChunk(new TcpEndpoint(target), 120),
      publish: async (_id, data) => void published.push(data.toString()),
      logger: silentLogger(), timers: systemTimers, reconnect: { initialMs: 50, maxMs: 200, jitter: 0 },
    });
    relay.start();
    try {
      const deadline = Date.now() + 10_000;
      while (!relay.isUp && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      for (let i = 0; i < 5; i += 1) {
        await relay.send(Buffer.from(`SHOW ${i}\n`));
        while (published.length <= i && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      }
      await new Promise((r) => setTimeout(r, 100)); // a cut reply would publish its rest as another message
      expect(published).toEqual(Array.from({ length: 5 }, (_, i) => `ECHO:SHOW ${i}\r\n`));
    } finally {
      await relay.stop();
    }
  });
});
