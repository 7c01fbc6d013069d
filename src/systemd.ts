// sd_notify over the NOTIFY_SOCKET datagram socket (the only importer of unix-dgram).
// Without NOTIFY_SOCKET every call is a no-op, so the daemon runs the same outside systemd.
import unixDgram from 'unix-dgram';
import type { Logger } from './log.js';

export interface Notifier {
  readonly enabled: boolean;
  ready(status: string): void;
  status(text: string): void;
  watchdog(): void;
  stopping(status: string): void;
  close(): void;
}

/** Half of WATCHDOG_USEC in ms when the watchdog is armed for this process, else undefined. */
export function watchdogIntervalMs(env: NodeJS.ProcessEnv, pid: number): number | undefined {
  const usec = Number(env.WATCHDOG_USEC);
  if (!Number.isFinite(usec) || usec <= 0) return undefined;
  if (env.WATCHDOG_PID !== undefined && Number(env.WATCHDOG_PID) !== pid) return undefined;
  return Math.max(1, Math.floor(usec / 2000));
}

/** One STATUS= line: systemd shows it in `systemctl status`; keep it to one short line. */
export function statusLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').slice(0, 200);
}

export function createNotifier(env: NodeJS.ProcessEnv, logger: Logger): Notifier {
  const path = env.NOTIFY_SOCKET;
  if (path === undefined || path === '') return disabledNotifier();
  if (path.startsWith('@')) {
    logger.warn({ notifySocket: path }, 'abstract NOTIFY_SOCKET not supported, systemd notifications off');
    return disabledNotifier();
  }
  const socket = unixDgram.createSocket('unix_dgram');
  let failed = false;
  socket.on('error', (err: Error) => report(err));
  function report(err: Error): void {
    if (failed) return;
    failed = true;
    logger.warn({ err, notifySocket: path }, 'systemd notification failed');
  }
  function send(message: string): void {
    const buf = Buffer.from(message);
    try {
      socket.send(buf, 0, buf.length, path as string, (err?: Error) => {
        if (err) report(err);
        else failed = false;
      });
    } catch (err) {
      report(err as Error);
    }
  }
  return {
    enabled: true,
    ready: (status) => send(`READY=1\nSTATUS=${statusLine(status)}`),
    status: (text) => send(`STATUS=${statusLine(text)}`),
    watchdog: () => send('WATCHDOG=1'),
    stopping: (status) => send(`STOPPING=1\nSTATUS=${statusLine(status)}`),
    close: () => {
      try {
        socket.close();
      } catch {
        // already closed
      }
    },
  };
}

function disabledNotifier(): Notifier {
  const noop = (): void => undefined;
  return { enabled: false, ready: noop, status: noop, watchdog: noop, stopping: noop, close: noop };
}
