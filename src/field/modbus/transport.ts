// Adapter: the only importer of modbus-serial. One transport = one serial port or TCP connection.
// A fresh modbus-serial client is made on every open(), so nothing leaks from a dead connection.
import ModbusPkg from 'modbus-serial';
import type { BusConfig } from '../../core/config/site-types.js';
import { describeTarget, type LateReplyListener, type ModbusTransport, type ReplyShape, type TransportFactory } from './transport-types.js';
import { type Clock, systemClock, systemTimers, type Timers } from '../../core/time.js';
import { t35Ms } from '../../core/config/buses.js';
import { InvalidRequestError, ModbusFrameError, ModbusTimeoutError, PortClosedError } from './errors.js';
import { configuredGuardMs } from './late-guard.js';
import { wireError, wireProblem } from './wire-verdict.js';
import { openWithin } from './port-open.js';
import { PendingReplies } from './pending-replies.js';
import { exchangeRaw, type RawReplyWindow, withoutFrames } from './raw-exchange.js';
import { type ExpectedReply, type ParsedRead, readReplyMismatch, writeEchoMismatch } from '../../core/modbus/reply-check.js';
import { RtuLinePort } from './rtu-line-port.js';
import { requestFrameLength } from '../../core/modbus/rtu-frame.js';
import { hrClock, untilQuiet } from './line-silence.js';
import { ModbusTcpPort } from './modbus-tcp-port.js';

export { describeTarget, type ModbusTransport, type TransportFactory } from './transport-types.js';
const ModbusRTU = ModbusPkg.default;
type ModbusClient = InstanceType<typeof ModbusRTU>;

class ModbusSerialTransport implements ModbusTransport {
  readonly target: string;
  readonly keepsSilenceAfterReply: boolean;
  private client: ModbusClient | undefined;
  private readonly closeListeners: Array<(reason: string, outOfStep?: boolean) => void> = [];
  private outOfStep = false;
  /** Requests awaiting an answer: failed at once when the port closes. */
  private readonly pending = new PendingReplies();
  private readonly discardListeners: Array<(reason: string) => void> = [];
  private readonly lateListeners: LateReplyListener[] = [];
  /** Modbus TCP only: our port in place of modbus-serial's (framing, 16-bit ids, reply matching). */
  private guard: ModbusTcpPort | undefined;
  /** RTU framing (serial or through a TCP serial server): our port in place of modbus-serial's. */
  private line: RtuLinePort | undefined;
  /** The silence an RTU line keeps between frames, ms (t3.5 or the configured interFrameDelayMs). */
  private readonly silenceMs: number;
  /** Why the session ended, when fieldgate knows better than the library. */
  private closeReason = '';

  constructor(private readonly config: BusConfig, private readonly timers: Timers = systemTimers, private readonly clock: Clock = systemClock) {
    this.target = describeTarget(config);
    this.keepsSilenceAfterReply = config.kind !== 'tcp';
    this.silenceMs = config.kind === 'rtu'
      ? Math.max(t35Ms(config.baudRate, config.dataBits, config.parity, config.stopBits), config.interFrameDelayMs)
      : config.kind === 'rtu-over-tcp' ? config.interFrameDelayMs : 0;
  }

  onClose(listener: (reason: string, outOfStep?: boolean) => void): void {
    this.closeListeners.push(listener);
  }

  onDiscard(listener: (reason: string) => void): void {
    this.discardListeners.push(listener);
  }

  onLateReply(listener: LateReplyListener): void {
    this.lateListeners.push(listener);
  }

  watchLateReplyFor(unit: number, request: ReplyShape, guardMs: number): void {
    this.line?.awaitedLate.watchFor(unit, request, guardMs);
  }

  private discarded(reason: string): void {
    for (const listener of this.discardListeners) listener(reason);
  }

  private lateReply(unit: number, answeredAfterMs: number, request: ReplyShape): void {
    this.discarded(`late reply of unit ${unit} (${Math.round(answeredAfterMs)} ms after its request)`);
    for (const listener of this.lateListeners) listener(unit, answeredAfterMs, request);
  }

  async open(): Promise<void> {
    if (this.client) await this.close();
    const config = this.config;
    const port = config.kind === 'tcp' ? new ModbusTcpPort(config.host, config.port, {
      onDiscard: (reason) => this.discarded(reason),
      onDesync: (reason) => this.resync(client, reason),
    }) : RtuLinePort.forBus(config, this.clock, (unit, afterMs, request) => this.lateReply(unit, afterMs, request));
    const client = new ModbusRTU(port);
    // modbus-serial re-emits port errors; without a listener an EventEmitter 'error' would throw.
    this.closeReason = '';
    this.outOfStep = false;
    client.on('error', (err: unknown) => {
      this.closeReason = err instanceof Error ? err.message : String(err);
    });
    await openWithin(client, this.target, this.config.timeoutMs, this.timers);
    this.client = client;
    // modbus-serial drops its port error listener on close; a later write error (EIO from an
    // unplugged adapter) must not become an uncaught exception.
    port.on('error', (err: unknown) => { this.closeReason = err instanceof Error ? err.message : String(err); });
    this.guard = port instanceof ModbusTcpPort ? port : undefined;
    this.line = port instanceof RtuLinePort ? port : undefined;
    client.on('close', () => {
      if (this.client !== client) return; // closed on purpose
      this.client = undefined;
      const reason = this.closeReason || (this.config.kind === 'rtu' ? 'serial port closed' : 'connection closed by peer');
      this.pending.failAll(new PortClosedError(reason));
      for (const listener of this.closeListeners) listener(reason, this.outOfStep);
    });
  }

  /** Replies no longer line up with requests: drop the connection (the bus reopens it). */
  private resync(client: ModbusClient, reason: string): void {
    if (this.client !== client) return;
    this.discarded(reason);
    this.closeReason = `replies out of step: ${reason}`;
    this.outOfStep = true;
    // What was waiting got garbage, not a closed port: its unit is charged for it (cool-down).
    this.pending.failEach((unit) => new ModbusFrameError(unit, reason));
    this.guard?.destroy();
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.pending.failAll(new PortClosedError('closed by fieldgate'));
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

  /** Waits for the line's t3.5 silence, then starts a request on it (bytes already waiting are a discard). */
  private async startOnQuietLine(line: RtuLinePort, expected?: ExpectedReply): Promise<void> {
    const quietBefore = untilQuiet(() => line.lastActivityMs, this.silenceMs);
    if (quietBefore) await quietBefore;
    const stale = line.begin(expected);
    if (stale > 0) this.discarded(`${stale} stale bytes before the request`);
  }

  /** One transaction, rejected with a typed error unless the reply is exactly the awaited one (`check`). */
  private async transact<T>(expected: ExpectedReply, timeoutMs: number,
    call: (client: ModbusClient) => Promise<T>, check: (reply: T) => string | undefined): Promise<T> {
    try {
      return await this.exchange(expected, timeoutMs, call, check);
    } catch (err) {
      // A CRC or length error from the library may be an echo or a reply of another length: say so.
      throw this.line ? wireError(this.line.verdict(), expected.unit, err) : err;
    } finally {
      this.line?.end();
    }
  }

  private async exchange<T>(expected: ExpectedReply, timeoutMs: number,
    call: (client: ModbusClient) => Promise<T>, check: (reply: T) => string | undefined): Promise<T> {
    const client = this.client;
    if (!client || !client.isOpen) throw new PortClosedError('port not open');
    const guard = this.guard;
    const line = this.line;
    // The send-time silence: nothing goes out before the line has been quiet for t3.5.
    if (line) await this.startOnQuietLine(line, expected);
    const sentAt = this.clock.now();
    client.setID(expected.unit);
    // The library starts its timer as the request's first byte goes out: the unit's time to answer
    // starts when the last one has left (a long write at a low baud spends much of it on the wire).
    client.setTimeout(timeoutMs + (line?.wireMs(requestFrameLength(expected.functionCode, expected.quantity)) ?? 0));
    const transactionId = guard?.expect(expected);
    line?.expect(expected);
    let reply: T;
    try {
      reply = await this.pending.settleOnClose(call(client), expected.unit, timeoutMs);
    } catch (err) {
      if (err instanceof ModbusTimeoutError && guard && guard.pendingBytes > 0 && this.client === client) {
        this.resync(client, `${guard.pendingBytes} bytes of an unfinished reply at timeout`);
      } else if (err instanceof ModbusTimeoutError && line) {
        // RTU has no transaction id: the reply may still come. The bus does not ask this unit a
        // request of the same reply shape until it came (reported by the line port) or its guard
        // ran out, so it cannot pass for another; the error names the shape for the bus's guard.
        line.awaitLate({ ...expected, sentAt }, configuredGuardMs(this.config, timeoutMs));
        throw new ModbusTimeoutError(err.unit, err.timeoutMs, { functionCode: expected.functionCode, quantity: expected.quantity, address: expected.address });
      }
      throw err;
    } finally {
      if (transactionId !== undefined) guard?.settle(transactionId);
    }
    if (line) {
      // Listen for one inter-frame silence more: a reply is only unambiguous if nothing follows it.
      const quietAfter = untilQuiet(() => line.lastActivityMs, this.silenceMs);
      if (quietAfter) await quietAfter;
      const problem = wireProblem(line.verdict(), expected.unit);
      if (problem !== undefined) {
        this.discarded(problem.message);
        throw problem;
      }
    }
    const problem = check(reply);
    if (problem !== undefined) return this.reject(expected.unit, problem);
    return reply;
  }

  private reject(unit: number, problem: string): never {
    this.discarded(problem);
    throw new ModbusFrameError(unit, problem);
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

  async broadcast(frame: Buffer, turnaroundMs: number): Promise<void> {
    const client = this.client;
    const line = this.line;
    if (!line) throw new InvalidRequestError(`broadcast needs RTU framing (${this.target} is ${this.config.kind})`);
    if (!client || !client.isOpen || !line.isOpen) throw new PortClosedError('port not open');
    await this.startOnQuietLine(line);
    const { closed, release } = this.pending.untilClosed(0);
    try {
      line.write(frame);
      // The turnaround counts from when the frame has left the line (its wire time estimated).
      const leftInMs = Math.max(0, line.lastActivityMs - hrClock());
      await Promise.race([new Promise<void>((resolve) => { this.timers.setTimer(resolve, leftInMs + turnaroundMs); }), closed]);
    } finally {
      release();
      // Nobody answers a broadcast: what was heard (beyond the adapter's own echo) is a discard.
      const heard = line.takeUnmatched() - (this.config.kind !== 'tcp' && this.config.echo === true ? frame.length : 0);
      if (heard > 0) this.discarded(`${heard} bytes heard after a broadcast, which no unit answers`);
      line.end();
    }
  }

  async exchangeRaw(request: Buffer, window: RawReplyWindow): Promise<Buffer> {
    if (this.config.kind !== 'rtu') throw new InvalidRequestError(`raw bytes need an rtu bus (${this.target} is ${this.config.kind})`);
    const client = this.client;
    const line = this.line;
    const port = client && client.isOpen ? line?.rawPort : undefined;
    if (!client || !line || !port) throw new PortClosedError('port not open');
    await this.startOnQuietLine(line);
    const { closed, release } = this.pending.untilClosed(-1);
    try {
      const reply = await Promise.race([exchangeRaw(port, request, window, this.timers), closed]);
      // A late Modbus reply that came meanwhile is no part of the stream's answer.
      return withoutFrames(reply, line.lateFramesSinceBegin());
    } catch (err) {
      // A serial write that fails (EIO: adapter unplugged) means the port is gone.
      if (err instanceof PortClosedError) throw err;
      throw new PortClosedError(`write failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    } finally {
      release();
      line.takeUnmatched(); // the stream's reply, also seen by the Modbus port: not a Modbus discard
      line.end();
    }
  }
}

export const createModbusTransport: TransportFactory = (config) => new ModbusSerialTransport(config);
