// sd_notify over the NOTIFY_SOCKET datagram socket. Node has no AF_UNIX datagram sockets, so two
// libc calls go through koffi's FFI (libc.ts). The daemon's own process sends, so the unit keeps
// NotifyAccess=main. Without NOTIFY_SOCKET every call is a no-op and koffi is never loaded.
import type { Logger } from './log.js';
import { errnoError, libc } from '../os/libc.js';

export interface Notifier {
  readonly enabled: boolean;
  ready(status: string): void;
  status(text: string): void;
  watchdog(): void;
  stopping(status: string): void;
  /** A reload begins (systemd waits for the next ready()); `monotonicUsec`: CLOCK_MONOTONIC now, in µs. */
  reloading(status: string, monotonicUsec: bigint): void;
  close(): void;
}

/** CLOCK_MONOTONIC in microseconds, as MONOTONIC_USEC wants it (Node's hrtime reads that clock on Linux). */
export function monotonicUsec(): bigint {
  return process.hrtime.bigint() / 1000n;
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

const AF_UNIX = 1;
const SUN_PATH_BYTES = 108;

/**
 * struct sockaddr_un for NOTIFY_SOCKET: a filesystem path, or "@name" for the abstract namespace
 * (leading NUL, length without terminator). Throws when the name cannot fit.
 */
export function unixSocketAddress(notifySocket: string): Buffer {
  const abstract = notifySocket.startsWith('@');
  const name = Buffer.from(abstract ? notifySocket.slice(1) : notifySocket);
  const pathBytes = abstract ? 1 + name.length : name.length + 1;
  if (name.length === 0 || pathBytes > SUN_PATH_BYTES || (!abstract && name.includes(0))) {
    throw new Error(`NOTIFY_SOCKET is not a usable unix socket address (${pathBytes} bytes)`);
  }
  const address = Buffer.alloc(2 + pathBytes);
  // sa_family_t is host-endian; every platform fieldgate ships for is little-endian.
  address.writeUInt16LE(AF_UNIX, 0);
  name.copy(address, abstract ? 3 : 2);
  return address;
}

interface DatagramSocket {
  /** Sends one datagram without blocking; throws an Error with the errno code on failure. */
  send(message: Buffer): void;
  close(): void;
}

const SOCK_DGRAM = 2;
const SOCK_CLOEXEC = 0o2000000;
// Never block the event loop on a full systemd queue, and no SIGPIPE.
const MSG_DONTWAIT = 0x40;
const MSG_NOSIGNAL = 0x4000;

function openUnixDatagram(address: Buffer): DatagramSocket {
  const { socket, sendto, close: closeFd, errno } = libc();
  let fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw errnoError('socket', errno());
  return {
    send(message) {
      if (fd < 0) throw new Error('notify socket is closed');
      const sent = sendto(fd, message, message.length, MSG_DONTWAIT | MSG_NOSIGNAL, address, address.length);
      if (sent < 0) throw errnoError('sendto', errno());
    },
    close() {
      if (fd >= 0) closeFd(fd);
      fd = -1;
    },
  };
}

export function createNotifier(env: NodeJS.ProcessEnv, logger: Logger): Notifier {
  const path = env.NOTIFY_SOCKET;
  if (path === undefined || path === '') return disabledNotifier();
  let socket: DatagramSocket;
  try {
    socket = openUnixDatagram(unixSocketAddress(path));
  } catch (err) {
    logger.warn({ err, notifySocket: path }, 'systemd notify socket unusable, systemd notifications off');
    return disabledNotifier();
  }
  let failed = false;
  function send(message: string): void {
    try {
      socket.send(Buffer.from(message));
      if (failed) logger.info({ notifySocket: path }, 'systemd notification recovered');
      failed = false;
    } catch (err) {
      if (!failed) logger.warn({ err, notifySocket: path }, 'systemd notification failed');
      failed = true;
    }
  }
  return {
    enabled: true,
    ready: (status) => send(`READY=1\nSTATUS=${statusLine(status)}`),
    status: (text) => send(`STATUS=${statusLine(text)}`),
    watchdog: () => send('WATCHDOG=1'),
    stopping: (status) => send(`STOPPING=1\nSTATUS=${statusLine(status)}`),
    reloading: (status, usec) => send(`RELOADING=1\nSTATUS=${statusLine(status)}\nMONOTONIC_USEC=${usec}`),
    close: () => socket.close(),
  };
}

function disabledNotifier(): Notifier {
  const noop = (): void => undefined;
  return { enabled: false, ready: noop, status: noop, watchdog: noop, stopping: noop, reloading: noop, close: noop };
}
