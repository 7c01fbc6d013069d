// Event streams on a real socket: a client that stops reading is dropped once its unsent data
// passes the bound (never buffered without end); the timer runs only while a stream is open.
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { EventStreams } from '../../../src/ops/web/event-streams.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { waitFor } from '../../system/harness.js';

describe('EventStreams', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('drops a client that reads nothing once its unsent data passes the bound, and stops its timer', async () => {
    const { logger, lines } = captureLogger();
    // 1 MB of status every 20 ms: the kernel's buffers fill, then the stream's own.
    const big = { blob: 'x'.repeat(1024 * 1024) };
    const streams = new EventStreams(2, undefined, () => big, logger, 20, 256 * 1024);
    server = createServer((_req, res) => {
      expect(streams.open(res, undefined)).toBe(true);
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    socket.pause();
    await waitFor(() => (streams.size === 1 ? true : undefined));
    await waitFor(() => (streams.size === 0 ? true : undefined), 30_000);
    expect(lines().some((l) => l.msg === 'slow event-stream client dropped')).toBe(true);
    // No client: no timer keeps the process awake.
    expect((streams as unknown as { timer: unknown }).timer).toBeUndefined();
    socket.destroy();
  });

  it('refuses a stream beyond the bound', async () => {
    const { logger } = captureLogger();
    const streams = new EventStreams(1, undefined, () => ({}), logger, 2000, 256 * 1024);
    const answers: boolean[] = [];
    server = createServer((_req, res) => {
      const ok = streams.open(res, undefined);
      answers.push(ok);
      if (!ok) res.writeHead(503).end();
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const first = new AbortController();
    expect((await fetch(url, { signal: first.signal })).status).toBe(200);
    expect((await fetch(url)).status).toBe(503);
    first.abort();
    await waitFor(() => (streams.size === 0 ? true : undefined));
    expect(answers).toEqual([true, false]);
  });
});
