// TCP access for custom data streams (docs/protocol.md §6): a socket registers with
// `<project_key>&<access_token>`, then raw bytes flow both ways. One socket per device: a newer
// registration of the same identity closes the older socket.
import type { Socket } from 'node:net';
import type { Logger } from 'fieldgate/workspace-kit';
import type { DeviceDirectory } from '../channel.js';
import type { Presence } from './presence.js';
import { parseRegistration, TerminatorFilter } from './registration.js';

export interface TcpStreamsDeps {
  directory: DeviceDirectory;
  presence: Presence;
  onStreamData(deviceId: string, data: Buffer): void;
  registerTimeoutMs: number;
  log: Logger;
}

export class TcpStreams {
  private readonly current = new Map<string, Socket>();
  private readonly sockets = new Set<Socket>();

  constructor(private readonly deps: TcpStreamsDeps) {}

  handleConnection(socket: Socket): void {
    const { log } = this.deps;
    this.sockets.add(socket);
    let deviceId: string | undefined;
    let pending: Buffer = Buffer.alloc(0);
    const terminator = new TerminatorFilter();
    const timer = setTimeout(() => {
      log.info({ remote: socket.remoteAddress }, 'tcp stream closed: not registered in time');
      socket.destroy();
    }, this.deps.registerTimeoutMs);

    const deliver = (data: Buffer): void => {
      const payload = terminator.push(data);
      if (deviceId === undefined || payload.length === 0) return;
      try {
        this.deps.onStreamData(deviceId, payload);
      } catch (err) {
        log.error({ deviceId, err }, 'tcp stream data handler failed');
      }
    };

    socket.on('data', (chunk: Buffer) => {
      if (deviceId !== undefined) {
        deliver(chunk);
        return;
      }
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      const result = parseRegistration(pending, (token, key) => this.authenticate(token, key));
      if (result.status === 'incomplete') return;
      clearTimeout(timer);
      if (result.status === 'refused') {
        log.info({ remote: socket.remoteAddress, reason: result.reason }, 'tcp stream registration refused');
        socket.destroy();
        return;
      }
      deviceId = result.deviceId;
      this.register(deviceId, socket);
      const rest = pending.subarray(result.consumed);
      pending = Buffer.alloc(0);
      // Bytes that came in the same chunk as the registration string are stream data.
      if (rest.length > 0) deliver(rest);
    });
    socket.on('error', (err) => log.debug({ deviceId, err: err.message }, 'tcp stream socket error'));
    socket.on('close', () => {
      clearTimeout(timer);
      this.sockets.delete(socket);
      if (deviceId === undefined) return;
      if (this.current.get(deviceId) === socket) this.current.delete(deviceId);
      this.deps.presence.leave(deviceId, socket);
    });
  }

  /** Raw bytes to the device's registered socket; false when it has none. */
  send(deviceId: string, data: Buffer): boolean {
    const socket = this.current.get(deviceId);
    if (socket === undefined || socket.destroyed || !socket.writable) return false;
    socket.write(data);
    return true;
  }

  close(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  private authenticate(accessToken: string, projectKey: string): string | undefined {
    try {
      return this.deps.directory.authenticate(accessToken, projectKey);
    } catch (err) {
      this.deps.log.error({ err }, 'device directory failed');
      return undefined;
    }
  }

  private register(deviceId: string, socket: Socket): void {
    // Join before the older socket leaves: a replacement is no offline transition.
    this.deps.presence.join(deviceId, socket);
    this.deps.presence.ready(deviceId, socket);
    const older = this.current.get(deviceId);
    this.current.set(deviceId, socket);
    if (older !== undefined && older !== socket) {
      this.deps.log.info({ deviceId }, 'tcp stream replaced by a newer connection');
      older.destroy();
    }
  }
}
