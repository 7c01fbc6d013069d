// Raw serial passthrough (the only importer of serialport outside the Modbus transport's library).
import { SerialPort } from 'serialport';
import type { StreamTarget } from '../../core/config/command-types.js';
import type { ByteEndpoint } from './endpoint.js';

type SerialTarget = Extract<StreamTarget, { kind: 'serial' }>;

export class SerialEndpoint implements ByteEndpoint {
  readonly target: string;
  private port: SerialPort | undefined;
  private readonly dataListeners: Array<(chunk: Buffer) => void> = [];
  private readonly closeListeners: Array<(reason: string) => void> = [];

  constructor(private readonly config: SerialTarget) {
    this.target = config.path;
  }

  onData(listener: (chunk: Buffer) => void): void {
    this.dataListeners.push(listener);
  }

  onClose(listener: (reason: string) => void): void {
    this.closeListeners.push(listener);
  }

  open(): Promise<void> {
    return new Promise((resolve, reject) => {
      const port = new SerialPort({
        path: this.config.path, baudRate: this.config.baudRate, parity: this.config.parity,
        dataBits: this.config.dataBits, stopBits: this.config.stopBits, autoOpen: false,
      });
      port.open((err) => {
        if (err) return reject(err);
        this.port = port;
        let lastError = '';
        port.on('data', (chunk: Buffer) => this.dataListeners.forEach((l) => l(chunk)));
        port.on('error', (e: Error) => (lastError = e.message));
        port.on('close', () => {
          if (this.port !== port) return;
          this.port = undefined;
          this.closeListeners.forEach((l) => l(lastError || 'serial port closed'));
        });
        resolve();
      });
    });
  }

  write(data: Buffer): Promise<void> {
    const port = this.port;
    if (!port) return Promise.reject(new Error(`${this.target} is not open`));
    return new Promise((resolve, reject) => {
      port.write(data, (err) => (err ? reject(err) : port.drain((e) => (e ? reject(e) : resolve()))));
    });
  }

  close(): Promise<void> {
    const port = this.port;
    this.port = undefined;
    if (!port || !port.isOpen) return Promise.resolve();
    return new Promise((resolve) => port.close(() => resolve()));
  }
}
