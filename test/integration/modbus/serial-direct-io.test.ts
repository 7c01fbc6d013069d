// Direct reads and writes on serialport's descriptor (no thread-pool round trip), over a real socat
// pty pair: bytes arrive whole and in order both ways (also a flood in ragged chunks), a write
// larger than the kernel takes at once finishes through the binding's own write, a close during a
// pending read is a clean close, and the peer going away is a disconnect. Anything that is not a
// Unix binding port is left alone.
import { afterEach, describe, expect, it } from 'vitest';
import { SerialPort } from 'serialport';
import { useDirectIo } from '../../../src/field/modbus/serial-direct-io.js';
import { createPtyPair, type PtyPair } from '../../../packages/simulator/src/index.js';
import { waitFor } from '../../helpers/wait.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function open(path: string, direct: boolean): Promise<SerialPort> {
  const port = new SerialPort({ path, baudRate: 115200, autoOpen: false, lock: false });
  await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
  if (direct) expect(useDirectIo(port.port)).toBe(true);
  cleanups.push(() => new Promise<void>((resolve) => { if (port.isOpen) port.close(() => resolve()); else resolve(); }));
  return port;
}

function collect(port: SerialPort): { bytes: () => Buffer } {
  const chunks: Buffer[] = [];
  port.on('data', (chunk: Buffer) => chunks.push(chunk));
  return { bytes: () => Buffer.concat(chunks) };
}

async function pair(): Promise<{ pty: PtyPair; a: SerialPort; b: SerialPort }> {
  const pty = await createPtyPair();
  cleanups.push(() => pty.close());
  return { pty, a: await open(pty.a, true), b: await open(pty.b, false) };
}

describe('direct serial I/O', () => {
  it('carries frames both ways, whole and in order', async () => {
    const { a, b } = await pair();
    const atA = collect(a);
    const atB = collect(b);
    const frames = Array.from({ length: 50 }, (_, i) => Buffer.from([i, 3, 0, i, 0, 2, 0xaa, 0x55]));
    for (const frame of frames) a.write(frame);
    await waitFor(() => atB.bytes().length === 400, { what: '400 bytes at the peer' });
    expect(atB.bytes()).toEqual(Buffer.concat(frames));
    for (const frame of frames) b.write(frame);
    await waitFor(() => atA.bytes().length === 400, { what: '400 bytes read directly' });
    expect(atA.bytes()).toEqual(Buffer.concat(frames));
  });

  it('a flood of noise in chunks of 1 to 300 bytes is read complete and in order', async () => {
    const { a, b } = await pair();
    const atA = collect(a);
    const noise = Buffer.from(Array.from({ length: 64 * 1024 }, (_, i) => (i * 131 + (i >> 7)) % 256));
    for (let at = 0, n = 1; at < noise.length; at += n, n = (n * 7) % 300 + 1) b.write(noise.subarray(at, at + n));
    await waitFor(() => atA.bytes().length >= noise.length, { what: '64 KiB read directly', timeoutMs: 30_000 });
    expect(atA.bytes().equals(noise)).toBe(true);
  });

  it('a write larger than the kernel takes at once is finished by the binding, nothing lost', async () => {
    const { a, b } = await pair();
    const atB = collect(b);
    const big = Buffer.from(Array.from({ length: 256 * 1024 }, (_, i) => (i * 7) % 251));
    await new Promise<void>((resolve, reject) => a.write(big, (err) => (err ? reject(err) : resolve())));
    await waitFor(() => atB.bytes().length >= big.length, { what: 'all 256 KiB at the peer', timeoutMs: 30_000 });
    expect(atB.bytes().equals(big)).toBe(true);
  });

  it('closing with a read pending is a clean close (no error)', async () => {
    const { a } = await pair();
    const errors: Error[] = [];
    a.on('error', (err: Error) => errors.push(err));
    a.on('data', () => undefined); // a read is pending on the poller
    await new Promise<void>((resolve, reject) => a.close((err) => (err ? reject(err) : resolve())));
    expect(a.isOpen).toBe(false);
    expect(errors).toEqual([]);
  });

  it('the peer going away closes the port as a disconnect', async () => {
    const { pty, a } = await pair();
    a.on('data', () => undefined);
    a.on('error', () => undefined);
    const closed = new Promise<unknown>((resolve) => a.once('close', resolve));
    await pty.close();
    const reason = await closed;
    expect(reason).toMatchObject({ disconnected: true });
  });

  it.each([
    ['undefined', undefined],
    ['a plain object', { fd: 3 }],
    ['a port without a poller', { fd: 3, read: () => undefined, write: () => undefined }],
    ['a closed port', { fd: null, poller: { once: () => undefined }, read: () => undefined, write: () => undefined }],
  ])('%s is left alone', (_, port) => {
    expect(useDirectIo(port)).toBe(false);
  });
});
