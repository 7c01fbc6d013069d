// The notify protocol against independent listeners: socat UNIX-RECV, and a Python socket with
// SO_PASSCRED that sees the sender's pid as systemd does (NotifyAccess=main).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/ops/log.js';
import { createNotifier, monotonicUsec, statusLine, unixSocketAddress, watchdogIntervalMs } from '../../../src/ops/systemd.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { pythonListener } from '../../helpers/notify-listener.js';
import { requireProgram } from '../../helpers/peers.js';

async function waitFor(cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('systemd notify', () => {
  let listener: ChildProcess | undefined;
  let dir: string | undefined;
  afterEach(() => {
    listener?.kill();
    listener = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('sends READY, STATUS, WATCHDOG and STOPPING datagrams to NOTIFY_SOCKET', async () => {
    dir = mkdtempSync(join(tmpdir(), 'fg-notify-'));
    const path = join(dir, 'notify.sock');
    requireProgram('socat');
    listener = spawn('socat', ['-u', `UNIX-RECV:${path}`, 'STDOUT'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let received = '';
    listener.stdout?.on('data', (c: Buffer) => (received += c.toString()));
    await waitFor(() => existsSync(path));

    const notifier = createNotifier({ NOTIFY_SOCKET: path }, silentLogger());
    expect(notifier.enabled).toBe(true);
    notifier.ready('polling 2 devices');
    notifier.watchdog();
    notifier.status('2 devices online');
    notifier.stopping('draining outbox');
    notifier.close();

    await waitFor(() => received.includes('STOPPING=1'));
    expect(received).toContain('READY=1\nSTATUS=polling 2 devices');
    expect(received).toContain('WATCHDOG=1');
    expect(received).toContain('STATUS=2 devices online');
    expect(received).toContain('STOPPING=1\nSTATUS=draining outbox');
    expect(received.indexOf('READY=1')).toBeLessThan(received.indexOf('STOPPING=1'));
  });

  it('announces a reload with RELOADING=1 and MONOTONIC_USEC (CLOCK_MONOTONIC), then READY=1', async () => {
    dir = mkdtempSync(join(tmpdir(), 'fg-notify-'));
    const path = join(dir, 'notify.sock');
    const peer = await pythonListener(path);
    listener = peer.child;
    const notifier = createNotifier({ NOTIFY_SOCKET: path }, silentLogger());
    const before = monotonicUsec();
    notifier.reloading('reloading the site file', monotonicUsec());
    notifier.ready('10/10 devices online');
    notifier.close();
    await waitFor(() => peer.datagrams.length === 2);
    const [reloading, ready] = peer.datagrams;
    const fields = Object.fromEntries(reloading.message.split('\n').map((line) => line.split('=')));
    expect(fields).toEqual({ RELOADING: '1', STATUS: 'reloading the site file', MONOTONIC_USEC: expect.stringMatching(/^\d+$/) });
    // The same clock systemd reads: not before our own reading, not in the far future.
    expect(BigInt(fields.MONOTONIC_USEC)).toBeGreaterThanOrEqual(before);
    expect(BigInt(fields.MONOTONIC_USEC) - before).toBeLessThan(60_000_000n);
    expect(ready).toEqual({ pid: process.pid, message: 'READY=1\nSTATUS=10/10 devices online' });
  });

  it('sends from the daemon process itself, so NotifyAccess=main accepts it', async () => {
    dir = mkdtempSync(join(tmpdir(), 'fg-notify-'));
    const path = join(dir, 'notify.sock');
    const peer = await pythonListener(path);
    listener = peer.child;
    const notifier = createNotifier({ NOTIFY_SOCKET: path }, silentLogger());
    notifier.ready('up');
    notifier.watchdog();
    notifier.close();
    await waitFor(() => peer.datagrams.length === 2);
    expect(peer.datagrams).toEqual([
      { pid: process.pid, message: 'READY=1\nSTATUS=up' },
      { pid: process.pid, message: 'WATCHDOG=1' },
    ]);
    expect(readFileSync('systemd/fieldgate.service', 'utf8')).toMatch(/^NotifyAccess=main$/m);
  });

  it('reaches a listener in the abstract namespace ("@name")', async () => {
    const name = `@fg-notify-${process.pid}-${Date.now()}`;
    const peer = await pythonListener(name);
    listener = peer.child;
    const notifier = createNotifier({ NOTIFY_SOCKET: name }, silentLogger());
    expect(notifier.enabled).toBe(true);
    notifier.ready('abstract');
    notifier.close();
    await waitFor(() => peer.datagrams.length === 1);
    expect(peer.datagrams[0]).toEqual({ pid: process.pid, message: 'READY=1\nSTATUS=abstract' });
  });

  it('warns once while the listener is gone and logs the recovery once', async () => {
    dir = mkdtempSync(join(tmpdir(), 'fg-notify-'));
    const path = join(dir, 'notify.sock');
    const log = captureLogger();
    const notifier = createNotifier({ NOTIFY_SOCKET: path }, log.logger);
    expect(() => {
      notifier.watchdog();
      notifier.watchdog();
      notifier.status('still nobody');
    }).not.toThrow();
    expect(log.count('systemd notification failed')).toBe(1);
    expect(log.lines().find((l) => l.msg === 'systemd notification failed')).toMatchObject({ err: { code: 'ENOENT' } });

    const peer = await pythonListener(path);
    listener = peer.child;
    notifier.watchdog();
    notifier.watchdog();
    notifier.close();
    await waitFor(() => peer.datagrams.length === 2);
    expect(peer.datagrams.map((d) => d.message)).toEqual(['WATCHDOG=1', 'WATCHDOG=1']);
    expect(log.count('systemd notification recovered')).toBe(1);
    expect(log.count('systemd notification failed')).toBe(1);
  });

  it('never blocks the event loop when the listener stops reading (full queue)', async () => {
    dir = mkdtempSync(join(tmpdir(), 'fg-notify-'));
    const path = join(dir, 'notify.sock');
    // Bound but never reading: the kernel queue (net.unix.max_dgram_qlen datagrams, 10 by default) fills.
    const code = 'import socket,sys,time\ns=socket.socket(socket.AF_UNIX,socket.SOCK_DGRAM)\ns.bind(sys.argv[1])\nprint("bound",flush=True)\ntime.sleep(60)';
    requireProgram('/usr/bin/python3');
    listener = spawn('/usr/bin/python3', ['-c', code, path], { stdio: ['ignore', 'pipe', 'inherit'] });
    let bound = false;
    listener.stdout?.on('data', () => (bound = true));
    await waitFor(() => bound);
    const log = captureLogger();
    const notifier = createNotifier({ NOTIFY_SOCKET: path }, log.logger);
    for (let i = 0; i < 5000; i += 1) notifier.watchdog();
    notifier.close();
    expect(log.count('systemd notification failed')).toBe(1);
    expect(log.lines().find((l) => l.msg === 'systemd notification failed')).toMatchObject({ err: { code: 'EAGAIN' } });
  });

  it('does not throw after close', () => {
    const notifier = createNotifier({ NOTIFY_SOCKET: '/nonexistent/notify.sock' }, silentLogger());
    notifier.close();
    notifier.close();
    expect(() => notifier.watchdog()).not.toThrow();
  });

  it.each([
    ['a path longer than sun_path', `/tmp/${'x'.repeat(120)}`],
    ['an empty abstract name', '@'],
    ['a path with a NUL byte', '/tmp/a\0b'],
  ])('turns notifications off with one warning for %s', (_what, notifySocket) => {
    const log = captureLogger();
    const notifier = createNotifier({ NOTIFY_SOCKET: notifySocket }, log.logger);
    expect(notifier.enabled).toBe(false);
    expect(log.count('systemd notify socket unusable, systemd notifications off')).toBe(1);
    expect(() => notifier.ready('x')).not.toThrow();
  });

  it.each([
    ['/run/systemd/notify', [1, 0, ...Buffer.from('/run/systemd/notify'), 0]],
    ['@sd', [1, 0, 0, ...Buffer.from('sd')]],
  ])('encodes %s as a sockaddr_un', (notifySocket, bytes) => {
    expect([...unixSocketAddress(notifySocket)]).toEqual(bytes);
  });

  it('accepts the longest path that fits sun_path (107 bytes + NUL)', () => {
    expect(unixSocketAddress(`/${'x'.repeat(106)}`)).toHaveLength(2 + 108);
    expect(() => unixSocketAddress(`/${'x'.repeat(107)}`)).toThrow(/not a usable unix socket address/);
  });

  it('is a no-op without NOTIFY_SOCKET', () => {
    const notifier = createNotifier({}, silentLogger());
    expect(notifier.enabled).toBe(false);
    expect(() => notifier.ready('x')).not.toThrow();
  });

  it.each([
    [{ WATCHDOG_USEC: '10000000' }, 42, 5000],
    [{ WATCHDOG_USEC: '10000000', WATCHDOG_PID: '42' }, 42, 5000],
    [{ WATCHDOG_USEC: '10000000', WATCHDOG_PID: '7' }, 42, undefined],
    [{}, 42, undefined],
    [{ WATCHDOG_USEC: 'junk' }, 42, undefined],
  ])('watchdog interval from %o for pid %d is %s ms', (env, pid, expected) => {
    expect(watchdogIntervalMs(env, pid)).toBe(expected);
  });

  it('keeps STATUS to one short line', () => {
    expect(statusLine('a\nb\r\nc')).toBe('a b c');
    expect(statusLine('x'.repeat(500))).toHaveLength(200);
  });
});
