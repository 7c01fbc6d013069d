// Adapter: the only importer of modbus-serial. One transport = one serial port or TCP connection.
// A fresh modbus-serial client is made on every open(), so nothing leaks from a dead connection.
import { EventEmitter } from 'node:events';
import ModbusPkg from 'modbus-serial';
import type { BusConfig } from '../../core/config/site-types.js';
import { describeTarget, type ModbusTransport, type TransportFactory } from './transport-types.js';
import { sleep, systemTimers, type Timers } from '../../core/time.js';
import { InvalidRequestError, ModbusFrameError, ModbusTimeoutError, PortClosedError, PortOpenError } from './errors.js';
import { destroyQuietly, libraryPortOf, mapLibraryError, serialPortOf, takeUnmatchedInput } from './library-errors.js';
import { exchangeRaw, type RawReplyWindow } from './raw-exchange.js';
import { type ExpectedReply, type ParsedRead, readReplyMismatch, writeEchoMismatch } from '../../core/modbus/reply-check.js';
import { RtuReceiveTally } from './rtu-receive-tally.js';
import { ModbusTcpPort } from './modbus-tcp-port.js';

export { describeTarget, type ModbusTransport, type TransportFactory } from './transport-types.js';
const ModbusRTU = ModbusPkg.default;
type ModbusClient = InstanceType<typeof ModbusRTU>;

/** How long a TCP connect or serial open may take before it counts as failed. */
const MIN_OPEN_TIMEOUT_MS = 3000;

class ModbusSerialTransport implements ModbusTransport {
  readonly target: string;
  readonly keepsSilenceAfterReply: boolean;
  private client: ModbusClient | undefined;
  private readonly closeListeners: Array<(reason: string, outOfStep?: boolean) => void> = [];
  private outOfStep = false;
  /** Rejecters of requests awaiting an answer: failed at once when the port closes. */
  private readonly pending = new Map<(err: Error) => void, number>();
  private readonly discardListeners: Array<(reason: string) => void> = [];
  /** Modbus TCP only: our port in place of modbus-serial's (framing, 16-bit ids, reply matching). */
  private guard: ModbusTcpPort | undefined;
  private tally: RtuReceiveTally | undefined;
  /** Why the session ended, when fieldgate knows better than the library. */
  private closeReason = '';

  constructor(private readonly config: BusConfig, private readonly timers: Timers = systemTimers) {
    this.target = describeTarget(config);
    this.keepsSilenceAfterReply = config.kind !== 'tcp';
  }

  onClose(listener: (reason: string, outOfStep?: boolean) => void): void {
    this.closeListeners.push(listener);
  }

  onDiscard(listener: (reason: string) => void): void {
    this.discardListeners.push(listener);
  }

  private discarded(reason: string): void {
    for (const listener of this.discardListeners) listener(reason);
  }

  async open(): Promise<void> {
    if (this.client) await this.close();
    const tcpPort = this.config.kind === 'tcp' ? new ModbusTcpPort(this.config.host, this.config.port, {
      onDiscard: (reason) => this.discarded(reason),
      onDesync: (reason) => this.resync(client, reason),
    }) : undefined;
    const client = new ModbusRTU(tcpPort);
    // modbus-serial re-emits port errors; without a listener an EventEmitter 'error' would throw.
    this.closeReason = '';
    this.outOfStep = false;
    client.on('error', (err: unknown) => {
      this.closeReason = err instanceof Error ? err.message : String(err);
    });
    const openTimeoutMs = Math.max(MIN_OPEN_TIMEOUT_MS, this.config.timeoutMs * 2);
    let cancelOpenTimeout = (): void => undefined;
    const timedOut = new Promise<never>((_, reject) => {
      cancelOpenTimeout = this.timers.setTimer(() => reject(new Error(`no connection within ${openTimeoutMs} ms`)), openTimeoutMs);
    });
    const connecting = this.connect(client);
    try {
      await Promise.race([connecting, timedOut]);
    } catch (err) {
      destroyQuietly(client);
      // An open that completes after its timeout would keep the port (and its lock) with no owner,
      // so every reopen would fail with "Cannot lock port": close it as soon as it is open.
      connecting.then(() => destroyQuietly(client), () => undefined);
      const reason = (err instanceof Error ? err.message : String(err)).replace(/^Error: /, '');
      throw new PortOpenError(this.target, reason, { cause: err });
    } finally {
      cancelOpenTimeout();
    }
    this.client = client;
    // modbus-serial drops its port error listener on close; a later write error (EIO from an
    // unplugged adapter) must not become an uncaught exception.
    const port = libraryPortOf(client);
    if (port instanceof EventEmitter) port.on('error', (err: unknown) => { this.closeReason = err instanceof Error ? err.message : String(err); });
    this.installChecks(client, tcpPort);
    client.on('close', () => {
      if (this.client !== client) return; // closed on purpose
      this.client = undefined;
      const reason = this.closeReason || (this.config.kind === 'rtu' ? 'serial port closed' : 'connection closed by peer');
      this.failPending(new PortClosedError(reason));
      for (const listener of this.closeListeners) listener(reason, this.outOfStep);
    });
  }

  /** The reply checks of this framing: our MBAP guard on Modbus TCP, the receive tally on RTU framing. */
  private installChecks(client: ModbusClient, tcpPort: ModbusTcpPort | undefined): void {
    this.guard = tcpPort;
    this.tally = tcpPort ? undefined : RtuReceiveTally.install(client);
    if (!this.guard && !this.tally) throw new PortOpenError(this.target, `unsupported modbus-serial ${this.config.kind} port (cannot check replies)`);
  }

  /** Replies no longer line up with requests: drop the connection (the bus reopens it). */
  private resync(client: ModbusClient, reason: string): void {
    if (this.client !== client) return;
    this.discarded(reason);
    this.closeReason = `replies out of step: ${reason}`;
    this.outOfStep = true;
    // What was waiting got garbage, not a closed port: its unit is charged for it (cool-down).
    for (const [reject, unit] of this.pending) reject(new ModbusFrameError(unit, reason));
    this.pending.clear();
    this.guard?.destroy();
  }

  private connect(client: ModbusClient): Promise<void> {
    const config = this.config;
    switch (config.kind) {
      case 'rtu':
        return client.connectRTUBuffered(config.path, {
          baudRate: config.baudRate, parity: config.parity, dataBits: config.dataBits, stopBits: config.stopBits,
        });
      case 'tcp': // the client was made with our ModbusTcpPort
        return new Promise<void>((resolve, reject) => client.open((err: unknown) => (err ? reject(err) : resolve())));
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
      const cancelGuard = this.timers.setTimer(resolve, 1000); // never hang a shutdown on a stuck port
      const finish = () => { cancelGuard(); resolve(); };
      try {
        (this.config.kind === 'rtu' ? client.close : client.destroy).call(client, finish);
      } catch {
        finish();
      }
    });
  }

  private failPending(err: Error): void {
    for (const reject of this.pending.keys()) reject(err);
    this.pending.clear();
  }

  /** One transaction, rejected with a typed error unless the reply is exactly the awaited one (`check`). */
  private async transact<T>(expected: ExpectedReply, timeoutMs: number,
    call: (client: ModbusClient) => Promise<T>, check: (reply: T) => string | undefined): Promise<T> {
    try {
      return await this.exchange(expected, timeoutMs, call, check);
    } finally {
      this.tally?.end();
    }
  }

  private async exchange<T>(expected: ExpectedReply, timeoutMs: number,
    call: (client: ModbusClient) => Promise<T>, check: (reply: T) => string | undefined): Promise<T> {
    const client = this.client;
    if (!client || !client.isOpen) throw new PortClosedError('port not open');
    const guard = this.guard;
    const stale = this.tally?.begin(client) ?? 0;
    if (stale > 0) this.discarded(`${stale} stale bytes before the request`);
    client.setID(expected.unit);
    client.setTimeout(timeoutMs);
    const transactionId = guard?.expect(expected);
    let reply: T;
    try {
      reply = await this.settleOnClose(call(client), expected.unit, timeoutMs);
    } catch (err) {
      if (err instanceof ModbusTimeoutError && guard && guard.pendingBytes > 0 && this.client === client) {
        this.resync(client, `${guard.pendingBytes} bytes of an unfinished reply at timeout`);
      } else if (err instanceof ModbusTimeoutError && !guard) {
        // RTU has no transaction id: a reply coming just after the timeout would pass for the answer
        // to the next request. Keep listening one more timeout and drop what comes.
        await sleep(this.timers, timeoutMs);
        const late = takeUnmatchedInput(client);
        if (late > 0) this.discarded(`${late} bytes after the timeout (late reply)`);
      }
      throw err;
    } finally {
      if (transactionId !== undefined) guard?.settle(transactionId);
    }
    if (this.tally && this.config.kind !== 'tcp') {
      // Listen for one inter-frame silence more: a reply is only unambiguous if nothing follows it.
      await sleep(this.timers, this.config.interFrameDelayMs);
      const ambiguity = this.tally.ambiguity(client);
      if (ambiguity !== undefined) return this.reject(expected.unit, ambiguity);
    }
    const problem = check(reply);
    if (problem !== undefined) return this.reject(expected.unit, problem);
    return reply;
  }

  private reject(unit: number, problem: string): never {
    this.discarded(problem);
    throw new ModbusFrameError(unit, problem);
  }

  /** The library's promise, failed at once when the port closes under it. */
  private settleOnClose<T>(call: Promise<T>, unit: number, timeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const finish = (done: () => void) => {
        if (settled) return;
        settled = true;
        this.pending.delete(fail);
        done();
      };
      const fail = (err: Error) => finish(() => reject(err));
      this.pending.set(fail, unit);
      call.then((value) => finish(() => resolve(value)), (err: unknown) => fail(mapLibraryError(err, unit, timeoutMs)));
    });
  }

  private read<T extends ParsedRead>(unit: number, functionCode: number, start: number, count: number,
    timeoutMs: number, call: (client: ModbusClient) => Promise<T>): Promise<T> {
    const expected = { unit, functionCode, quantity: count, address: start };
    return this.transact(expected, timeoutMs, call, (reply) => readReplyMismatch(functionCode, count, reply));
  }

  private async write(unit: number, functionCode: number, address: number, quantity: number, timeoutMs: number,
    call: (client: ModbusClient) => Promise<{ address?: unknown; length?: unknown }>): Promise<void> {
    const expected = { unit, functionCode, quantity, address };
    await this.transact(expected, timeoutMs, call, (echo) => writeEchoMismatch(expected, echo));
  }

  async readCoils(unit: number, start: number, count: number, timeoutMs: number): Promise<boolean[]> {
    const res = await this.read(unit, 1, start, count, timeoutMs, (c) => c.readCoils(start, count));
    return res.data.slice(0, count); // the library pads to a multiple of 8
  }

  async readDiscreteInputs(unit: number, start: number, count: number, timeoutMs: number): Promise<boolean[]> {
    const res = await this.read(unit, 2, start, count, timeoutMs, (c) => c.readDiscreteInputs(start, count));
    return res.data.slice(0, count);
  }

  async readHoldingRegisters(unit: number, start: number, count: number, timeoutMs: number): Promise<Uint16Array> {
    const res = await this.read(unit, 3, start, count, timeoutMs, (c) => c.readHoldingRegisters(start, count));
    return Uint16Array.from(res.data);
  }

  async readInputRegisters(unit: number, start: number, count: number, timeoutMs: number): Promise<Uint16Array> {
    const res = await this.read(unit, 4, start, count, timeoutMs, (c) => c.readInputRegisters(start, count));
    return Uint16Array.from(res.data);
  }

  async writeRegister(unit: number, address: number, value: number, timeoutMs: number): Promise<void> {
    await this.write(unit, 6, address, 1, timeoutMs, (c) => c.writeRegister(address, value));
  }

  async writeRegisters(unit: number, address: number, values: readonly number[], timeoutMs: number): Promise<void> {
    await this.write(unit, 16, address, values.length, timeoutMs, (c) => c.writeRegisters(address, [...values]));
  }

  async writeCoil(unit: number, address: number, value: boolean, timeoutMs: number): Promise<void> {
    await this.write(unit, 5, address, 1, timeoutMs, (c) => c.writeCoil(address, value));
  }

  async writeCoils(unit: number, address: number, values: readonly boolean[], timeoutMs: number): Promise<void> {
    await this.write(unit, 15, address, values.length, timeoutMs, (c) => c.writeCoils(address, [...values]));
  }

  async exchangeRaw(request: Buffer, window: RawReplyWindow): Promise<Buffer> {
    if (this.config.kind !== 'rtu') throw new InvalidRequestError(`raw bytes need an rtu bus (${this.target} is ${this.config.kind})`);
    const client = this.client;
    const port = client && client.isOpen ? serialPortOf(client) : undefined;
    if (!client || !port) throw new PortClosedError('port not open');
    const stale = this.tally?.begin(client) ?? 0;
    if (stale > 0) this.discarded(`${stale} stale bytes before the request`);
    let fail: (err: Error) => void = () => undefined;
    const closed = new Promise<never>((_, reject) => {
      fail = reject;
      this.pending.set(fail, -1);
    });
    try {
      return await Promise.race([exchangeRaw(port, request, window, this.timers), closed]);
    } catch (err) {
      // A serial write that fails (EIO: adapter unplugged) means the port is gone.
      if (err instanceof PortClosedError) throw err;
      throw new PortClosedError(`write failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    } finally {
      this.pending.delete(fail);
      takeUnmatchedInput(client); // the stream's reply, also in modbus-serial's buffer: not a Modbus discard
      this.tally?.end();
    }
  }
}

export const createModbusTransport: TransportFactory = (config) => new ModbusSerialTransport(config);
