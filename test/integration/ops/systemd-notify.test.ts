// The notify protocol against an independent listener: socat UNIX-RECV as NOTIFY_SOCKET.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log.js';
import { createNotifier, statusLine, watchdogIntervalMs } from '../../../src/systemd.js';

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
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('sends READY, STATUS, WATCHDOG and STOPPING datagrams to NOTIFY_SOCKET', async () => {
    dir = mkdtempSync(join(tmpdir(), 'fg-notify-'));
    const path = join(dir, 'notify.sock');
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
