// Adapter: the only importer of modbus-serial. One transport = one serial port or TCP connection.
// A fresh modbus-serial client is made on every open(), so nothing leaks from a dead connection.
import { EventEmitter } from 'node:events';
import ModbusPkg from 'modbus-serial';
import type { BusConfig } from '../config/site-types.js';
import { systemTimers } from './clock.js';
import {
  InvalidRequestError, ModbusCrcError, ModbusEngineError, ModbusExceptionError, ModbusFrameError, ModbusTimeoutError,
  PortClosedError, PortOpenError,
} from './errors.js';
import { exchangeRaw, type RawPort, type RawReplyWindow } from './raw-exchange.js';

const ModbusRTU = ModbusPkg.default;
type ModbusClient = InstanceType<typeof ModbusRTU>;

export interface ModbusTransport {
  /** Human-readable target ("/dev/ttyUSB0" or "10.0.0.5:502"), for logs. */
  readonly target: string;
  open(): Promise<void>;
  close(): Promise<void>;
  /** Called once per open session when the port vanishes or the peer drops the connection. */
  onClose(listener: (reason: string) => void): void;
  readCoils(unit: number, start: number, count: number, timeoutMs: number): Promise<boolean[]>;
  readDiscreteInputs(unit: number, start: number, count: number, timeoutMs: number): Promise<boolean[]>;
  readHoldingRegisters(unit: number, start: number, count: number, timeoutMs: number): Promise<Uint16Array>;
  readInputRegisters(unit: number, start: number, count: number, timeoutMs: number): Promise<Uint16Array>;
  /** FC6 */
  writeRegister(unit: number, address: number, value: number, timeoutMs: number): Promise<void>;
  /** FC16 */
  writeRegisters(unit: number, address: number, values: readonly number[], timeoutMs: number): Promise<void>;
  /** FC5 */
  writeCoil(unit: number, address: number, value: boolean, timeoutMs: number): Promise<void>;
  /** FC15 */
  writeCoils(unit: number, address: number, values: readonly boolean[], timeoutMs: number): Promise<void>;
  /** Non-Modbus bytes on an RTU line, the reply collected until quiet (custom data streams). */
  exchangeRaw(request: Buffer, window: RawReplyWindow): Promise<Buffer>;
}

export type TransportFactory = (config: BusConfig) => ModbusTransport;

/** How long a TCP connect or serial open may take before it counts as failed. */
const MIN_OPEN_TIMEOUT_MS = 3000;

export function describeTarget(config: BusConfig): string {
  return config.kind === 'rtu' ? config.path : `${config.host}:${config.port}`;
}

/** Maps modbus-serial's loosely typed errors (message strings, errno, modbusCode) to our types. */
export function mapLibraryError(err: unknown, unit: number, timeoutMs: number): ModbusEngineError {
  if (err instanceof ModbusEngineError) return err;
  const fields = typeof err === 'object' && err !== null ? (err as Record<string, unknown>) : {};
  const message = typeof fields.message === 'string' ? fields.message : String(err);
  if (typeof fields.modbusCode === 'number') return new ModbusExceptionError(unit, fields.modbusCode);
  if (fields.errno === 'ETIMEDOUT' || message === 'Timed out') return new ModbusTimeoutError(unit, timeoutMs);
  if (message === 'CRC error') return new ModbusCrcError(unit);
  if (message.startsWith('Data length error') || message.startsWith('Unexpected data error')) {
    return new ModbusFrameError(unit, message);
  }
  if (message === 'Port Not Open') return new PortClosedError('port not open');
  return new ModbusEngineError(`unit ${unit}: ${message}`, { cause: err });
}

class ModbusSerialTransport implements ModbusTransport {
  readonly target: string;
  private client: ModbusClient | undefined;
  private readonly closeListeners: Array<(reason: string) => void> = [];
  /** Rejecters of requests awaiting an answer: failed at once when the port closes. */
  private readonly pending = new Set<(err: Error) => void>();

  constructor(private readonly config: BusConfig) {
    this.target = describeTarget(config);
  }

  onClose(listener: (reason: string) => void): void {
    this.closeListeners.push(listener);
  }

  async open(): Promise<void> {
    if (this.client) await this.close();
    const client = new ModbusRTU();
    // modbus-serial re-emits port errors; without a listener an EventEmitter 'error' would throw.
    let lastError = '';
    client.on('error', (err: unknown) => {
      lastError = err instanceof Error ? err.message : String(err);
    });
    const openTimeoutMs = Math.max(MIN_OPEN_TIMEOUT_MS, this.config.timeoutMs * 2);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no connection within ${openTimeoutMs} ms`)), openTimeoutMs);
    });
    try {
      await Promise.race([this.connect(client), timedOut]);
    } catch (err) {
      destroyQuietly(client);
      const reason = (err instanceof Error ? err.message : String(err)).replace(/^Error: /, '');
      throw new PortOpenError(this.target, reason, { cause: err });
    } finally {
      clearTimeout(timer);
    }
    this.client = client;
    // modbus-serial drops its port error listener when the port closes; a write error the port
    // reports after that (EIO from an unplugged adapter) must not become an uncaught exception.
    const port: unknown = Reflect.get(client, '_port');
    if (port instanceof EventEmitter) {
      port.on('error', (err: unknown) => {
        lastError = err instanceof Error ? err.message : String(err);
      });
    }
    client.on('close', () => {
      if (this.client !== client) return; // closed on purpose
      this.client = undefined;
      const reason = lastError || (this.config.kind === 'rtu' ? 'serial port closed' : 'connection closed by peer');
      this.failPending(new PortClosedError(reason));
      for (const listener of this.closeListeners) listener(reason);
    });
  }

  private connect(client: ModbusClient): Promise<void> {
    const config = this.config;
    switch (config.kind) {
      case 'rtu':
        return client.connectRTUBuffered(config.path, {
          baudRate: config.baudRate, parity: config.parity, dataBits: config.dataBits, stopBits: config.stopBits,
        });
      case 'tcp':
        return client.connectTCP(config.host, { port: config.port });
      case 'rtu-over-tcp':
        // Raw RTU frames (with CRC) through a TCP serial server: modbus-serial calls this "telnet".
        // (Its connectTcpRTUBuffered speaks MBAP framing, i.e. plain Modbus TCP.)
        return client.connectTelnet(config.host, { port: config.port });
    }
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.failPending(new PortClosedError('closed by fieldgate'));
    if (!client) return;
    await new Promise<void>((resolve) => {
      const done = setTimeout(resolve, 1000); // never hang a shutdown on a stuck port
      const finish = () => { clearTimeout(done); resolve(); };
      try {
        if (this.config.kind === 'rtu') client.close(finish);
        else client.destroy(finish);
      } catch {
        finish();
      }
    });
  }

  private failPending(err: Error): void {
    for (const reject of this.pending) reject(err);
    this.pending.clear();
  }

  /** Runs one transaction; rejects with a typed error. */
  private transact<T>(unit: number, timeoutMs: number, call: (client: ModbusClient) => Promise<T>): Promise<T> {
    const client = this.client;
    if (!client || !client.isOpen) return Promise.reject(new PortClosedError('port not open'));
    if (this.config.kind !== 'tcp') discardStaleInput(client);
    client.setID(unit);
    client.setTimeout(timeoutMs);
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        this.pending.delete(fail);
        reject(err);
      };
      this.pending.add(fail);
      call(client).then(
        (value) => {
          if (settled) return;
          settled = true;
          this.pending.delete(fail);
          resolve(value);
        },
        (err: unknown) => fail(mapLibraryError(err, unit, timeoutMs)),
      );
    });
  }

  async readCoils(unit: number, start: number, count: number, timeoutMs: number): Promise<boolean[]> {
    const res = await this.transact(unit, timeoutMs, (c) => c.readCoils(start, count));
    return res.data.slice(0, count); // the library pads to a multiple of 8
  }

  async readDiscreteInputs(unit: number, start: number, count: number, timeoutMs: number): Promise<boolean[]> {
    const res = await this.transact(unit, timeoutMs, (c) => c.readDiscreteInputs(start, count));
    return res.data.slice(0, count);
  }

  async readHoldingRegisters(unit: number, start: number, count: number, timeoutMs: number): Promise<Uint16Array> {
    const res = await this.transact(unit, timeoutMs, (c) => c.readHoldingRegisters(start, count));
    return Uint16Array.from(res.data);
  }

  async readInputRegisters(unit: number, start: number, count: number, timeoutMs: number): Promise<Uint16Array> {
    const res = await this.transact(unit, timeoutMs, (c) => c.readInputRegisters(start, count));
    return Uint16Array.from(res.data);
  }

  async writeRegister(unit: number, address: number, value: number, timeoutMs: number): Promise<void> {
    await this.transact(unit, timeoutMs, (c) => c.writeRegister(address, value));
  }

  async writeRegisters(unit: number, address: number, values: readonly number[], timeoutMs: number): Promise<void> {
    await this.transact(unit, timeoutMs, (c) => c.writeRegisters(address, [...values]));
  }

  async writeCoil(unit: number, address: number, value: boolean, timeoutMs: number): Promise<void> {
    await this.transact(unit, timeoutMs, (c) => c.writeCoil(address, value));
  }

  async writeCoils(unit: number, address: number, values: readonly boolean[], timeoutMs: number): Promise<void> {
    await this.transact(unit, timeoutMs, (c) => c.writeCoils(address, [...values]));
  }

  async exchangeRaw(request: Buffer, window: RawReplyWindow): Promise<Buffer> {
    if (this.config.kind !== 'rtu') throw new InvalidRequestError(`raw bytes need an rtu bus (${this.target} is ${this.config.kind})`);
    const client = this.client;
    const port = client && client.isOpen ? serialPortOf(client) : undefined;
    if (!client || !port) throw new PortClosedError('port not open');
    // The reply also lands in modbus-serial's frame buffer; transact() flushes it before the next request.
    let fail: (err: Error) => void = () => undefined;
    const closed = new Promise<never>((_, reject) => {
      fail = reject;
      this.pending.add(fail);
    });
    try {
      return await Promise.race([exchangeRaw(port, request, window, systemTimers), closed]);
    } catch (err) {
      // A serial write that fails (EIO: adapter unplugged) means the port is gone.
      if (err instanceof PortClosedError) throw err;
      throw new PortClosedError(`write failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    } finally {
      this.pending.delete(fail);
    }
  }
}

/** The serialport instance inside modbus-serial's buffered RTU port (`_port._client`). */
function serialPortOf(client: ModbusClient): RawPort | undefined {
  const port: unknown = Reflect.get(client, '_port');
  const serial: unknown = typeof port === 'object' && port !== null ? Reflect.get(port, '_client') : undefined;
  if (typeof serial !== 'object' || serial === null) return undefined;
  const has = (name: string) => typeof Reflect.get(serial, name) === 'function';
  return has('write') && has('drain') && has('on') && has('off') ? (serial as RawPort) : undefined;
}

/**
 * RTU ports keep unmatched bytes in an internal buffer; a late reply to a timed-out request would
 * be taken as the answer to the next request for the same unit and function. Drop it before each
 * request, as a master flushes its receive FIFO before transmitting.
 */
function discardStaleInput(client: ModbusClient): void {
  const port: unknown = Reflect.get(client, '_port');
  if (typeof port === 'object' && port !== null && Buffer.isBuffer(Reflect.get(port, '_buffer'))) {
    Reflect.set(port, '_buffer', Buffer.alloc(0));
  }
}

function destroyQuietly(client: ModbusClient): void {
  try {
    client.destroy(() => undefined);
    client.close(() => undefined);
  } catch {
    // already closed or never opened
  }
}

export const createModbusTransport: TransportFactory = (config) => new ModbusSerialTransport(config);
