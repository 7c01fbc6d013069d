// Shared by the simulator integration tests: mbpoll as an independent master, a raw serial master,
// a raw TCP client, and a simulator built from inline YAML.
import { execFile } from 'node:child_process';
import net from 'node:net';
import { Writable } from 'node:stream';
import { SerialPort } from 'serialport';
import { silentLogger } from '../../../src/ops/log.js';
import { parseSimMap, type SimMap } from '../../../packages/simulator/src/map-file.js';
import { requireProgram } from '../../helpers/peers.js';

export function mapFrom(yaml: string): SimMap {
  const parsed = parseSimMap(yaml);
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  return parsed.map;
}

export const logger = silentLogger();

/** A stream that keeps what was written to it (a CLI's stdout or stderr). */
export class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

export function nowMicros(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

export interface MbpollResult {
  code: number;
  stdout: string;
  stderr: string;
  /** Values printed as "[ref]: value". */
  values: Map<number, string>;
}

export function mbpoll(args: string[], timeoutMs = 20_000): Promise<MbpollResult> {
  requireProgram('mbpoll');
  return new Promise((resolve) => {
    execFile('mbpoll', ['-1', ...args], { timeout: timeoutMs }, (err, stdout, stderr) => {
      const values = new Map<number, string>();
      for (const match of stdout.matchAll(/^\[(\d+)\]:\s+(\S+)/gm)) values.set(Number(match[1]), match[2]);
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
      resolve({ code, stdout, stderr, values });
    });
  });
}

/** A raw master on a serial port: write frames, collect whatever comes back. */
export class RawSerialMaster {
  readonly received: Buffer[] = [];
  /** process.hrtime of the last chunk received, µs (timing assertions use arrival, not polling time). */
  lastChunkMicros = 0;
  private constructor(private readonly port: SerialPort) {
    port.on('data', (chunk: Buffer) => {
      this.lastChunkMicros = nowMicros();
      this.received.push(chunk);
    });
  }

  static async open(path: string, baudRate = 9600): Promise<RawSerialMaster> {
    const port = new SerialPort({ path, baudRate, parity: 'even', autoOpen: false, lock: false });
    await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
    return new RawSerialMaster(port);
  }

  bytes(): Buffer {
    return Buffer.concat(this.received);
  }

  clear(): void {
    this.received.length = 0;
  }

  write(frame: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      this.port.write(frame, (err) => (err ? reject(err) : this.port.drain(() => resolve())));
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.port.isOpen ? this.port.close(() => resolve()) : resolve()));
  }
}

/** A raw TCP client collecting every byte it receives. */
export class RawTcpClient {
  readonly received: Buffer[] = [];
  lastChunkMicros = 0;
  closed = false;
  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk) => {
      this.lastChunkMicros = nowMicros();
      this.received.push(chunk);
    });
    socket.on('close', () => { this.closed = true; });
    socket.on('error', () => {});
  }

  static connect(port: number): Promise<RawTcpClient> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => resolve(new RawTcpClient(socket)));
      socket.once('error', reject);
    });
  }

  bytes(): Buffer {
    return Buffer.concat(this.received);
  }

  close(): void {
    this.socket.destroy();
  }
}
