// Raw TCP passthrough to a serial server or a device socket (node:net).
import { Socket, connect } from 'node:net';
import type { StreamTarget } from '../../core/config/command-types.js';
import { systemTimers, type Timers } from '../../core/time.js';
import type { ByteEndpoint } from './endpoint.js';

type TcpTarget = Extract<StreamTarget, { kind: 'tcp' }>;

export class TcpEndpoint implements ByteEndpoint {
  readonly target: string;
  private socket: Socket | undefined;
  private readonly dataListeners: Array<(chunk: Buffer) => void> = [];
  private readonly closeListeners: Array<(reason: string) => void> = [];

  constructor(private readonly config: TcpTarget, private readonly connectTimeoutMs = 5000, private readonly timers: Timers = systemTimers) {
    this.target = `${config.host}:${config.port}`;
  }

  onData(listener: (chunk: Buffer) => void): void {
    this.dataListeners.push(listener);
  }

  onClose(listener: (reason: string) => void): void {
    this.closeListeners.push(listener);
  }

  open(): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: this.config.host, port: this.config.port });
      socket.setNoDelay(true);
      const cancelTimeout = this.timers.setTimer(() => socket.destroy(new Error(`no connection within ${this.connectTimeoutMs} ms`)), this.connectTimeoutMs);
      let lastError = '';
      socket.once('connect', () => {
        cancelTimeout();
        this.socket = socket;
        resolve();
      });
      socket.on('error', (err) => {
        lastError = err.message;
        if (this.socket !== socket) {
          cancelTimeout();
          reject(err);
        }
      });
      socket.on('data', (chunk: Buffer) => this.dataListeners.forEach((l) => l(chunk)));
      socket.on('close', () => {
        if (this.socket !== socket) return;
        this.socket = undefined;
        this.closeListeners.forEach((l) => l(lastError || 'connection closed by peer'));
      });
    });
  }

  write(data: Buffer): Promise<void> {
    const socket = this.socket;
    if (!socket) return Promise.reject(new Error(`${this.target} is not connected`));
    return new Promise((resolve, reject) => socket.write(data, (err) => (err ? reject(err) : resolve())));
  }

  close(): Promise<void> {
    const socket = this.socket;
    this.socket = undefined;
    if (!socket) return Promise.resolve();
    return new Promise((resolve) => {
      socket.once('close', () => resolve());
      socket.end();
      this.timers.setTimer(() => socket.destroy(), 1000, { unref: true }); // never hang a close on a silent peer
    });
  }
}
