// RTU framing as a port for modbus-serial's client (its public constructor takes any port object),
// in place of the library's buffered RTU and "telnet" ports: one serial port (serialport) or one
// TCP connection to a serial server. It cuts the awaited reply with RtuReplyFramer (echo, length
// mismatch, skipped and extra bytes), counts stray bytes between exchanges, and time-stamps the
// line with a monotonic high-resolution clock so the next request keeps the inter-frame silence.
// It also watches for the late replies of timed-out requests (their units are not asked a request
// of the same reply shape until the reply was seen or its guard ran out): such a frame is reported
// and excused, so the exchange it landed in (of another unit, or of the same unit with a reply of
// another length) keeps its own, unambiguous reply. Each is watched for until its guard ends
// (awaited-late-replies.ts), no longer: a frame after that is a foreign one.
import { EventEmitter } from 'node:events';
import { Socket } from 'node:net';
import { SerialPort } from 'serialport';
import type { BusConfig } from '../../core/config/site-types.js';
import type { ExpectedReply } from '../../core/modbus/reply-check.js';
import { type ReplyVerdict, RtuReplyFramer } from '../../core/modbus/rtu-reply-framer.js';
import { type AwaitedLateReply, findLateFrames, replyFrameLength } from '../../core/modbus/late-frames.js';
import type { Clock } from '../../core/time.js';
import type { RawPort } from './raw-exchange.js';
import { AwaitedLateReplies } from './awaited-late-replies.js';
import { hrClock } from './line-silence.js';
import { useDirectIo } from './serial-direct-io.js';
import type { ReplyShape } from './transport-types.js';

type Callback = (err?: Error | null) => void;

/** A late reply was seen: its unit, how long after its request, and the request's shape. */
export type LateReplyListener = (unit: number, answeredAfterMs: number, request: ReplyShape) => void;

/** Received bytes kept for the late-reply scan: a few of the longest RTU frames (256 bytes). */
const CAPTURE_LIMIT = 2048;

/** What the framer saw, and how many of the other bytes were late replies (excused). */
export interface LineVerdict extends ReplyVerdict {
  lateBytes: number;
}

/** What the port needs of its byte stream (a serial port or a socket). */
interface LineStream extends EventEmitter {
  write(data: Buffer): unknown;
}

export interface RtuLineOptions {
  /** The adapter returns every request byte before the reply (RS-485 local echo): expect and strip it. */
  echo: boolean;
  /** Wire time of one character, ms (0 when unknown, e.g. through a TCP serial server). */
  charMs: number;
}

export class RtuLinePort extends EventEmitter {
  private readonly framer = new RtuReplyFramer();
  private stream: LineStream | undefined;
  private serial: SerialPort | undefined;
  private openFlag = false;
  private expected: ExpectedReply | undefined;
  /** Bytes that arrived while no exchange was running. */
  private between = 0;
  private lastReceiveMs = Number.NEGATIVE_INFINITY;
  private lastSendDoneMs = Number.NEGATIVE_INFINITY;
  private silenceTimer: NodeJS.Timeout | undefined;
  /** The late replies watched for, each until its guard ends (the bus sets how long: `watchFor`). */
  readonly awaitedLate: AwaitedLateReplies;
  /** Bytes received since the last exchange began while late replies are awaited, found ones cut out. */
  private capture = Buffer.alloc(0);
  /** Late frames found while an exchange ran, and between exchanges (bytes). */
  private lateDuring = 0;
  private lateBetween = 0;
  /** The late frames found since the exchange began (a raw exchange's reply must not carry them). */
  private lateFrames: Buffer[] = [];

  constructor(private readonly config: BusConfig, private readonly options: RtuLineOptions,
    private readonly clock: Clock, private readonly onLate: LateReplyListener) {
    super();
    this.awaitedLate = new AwaitedLateReplies(clock);
  }

  /** The port for an RTU or RTU-over-TCP bus, with its echo setting and character time. */
  static forBus(config: BusConfig, clock: Clock, onLate: LateReplyListener): RtuLinePort {
    const charMs = config.kind === 'rtu'
      ? ((1 + config.dataBits + (config.parity === 'none' ? 0 : 1) + config.stopBits) * 1000) / config.baudRate
      : 0; // unknown behind a TCP serial server
    return new RtuLinePort(config, { echo: config.kind !== 'tcp' && config.echo === true, charMs }, clock, onLate);
  }

  get isOpen(): boolean {
    return this.openFlag;
  }

  /** Wire time of `bytes` characters, ms (0 when unknown: through a TCP serial server). */
  wireMs(bytes: number): number {
    return Math.ceil(bytes * this.options.charMs);
  }

  /** When the line last carried a byte either way (the request's end estimated from its wire time). */
  get lastActivityMs(): number {
    return Math.max(this.lastReceiveMs, this.lastSendDoneMs);
  }

  open(callback: Callback): void {
    const config = this.config;
    if (config.kind === 'rtu') {
      const serial = new SerialPort({
        path: config.path, baudRate: config.baudRate, parity: config.parity, dataBits: config.dataBits,
        stopBits: config.stopBits, autoOpen: false,
      });
      this.attach(serial);
      this.serial = serial;
      serial.open((err) => this.opened(err, callback));
      return;
    }
    if (config.kind === 'tcp') {
      callback(new Error('RTU framing on a Modbus TCP bus'));
      return;
    }
    const socket = new Socket();
    this.attach(socket);
    socket.once('error', (err) => { if (!this.openFlag) callback(err); });
    socket.connect({ host: config.host, port: config.port }, () => {
      socket.setNoDelay(true);
      this.opened(null, callback);
    });
  }

  private attach(stream: LineStream): void {
    this.stream = stream;
    stream.on('data', (chunk: Buffer) => this.receive(chunk));
    stream.on('error', (err: Error) => { if (this.openFlag) this.emit('error', err); });
    stream.on('close', () => {
      const wasOpen = this.openFlag;
      this.openFlag = false;
      this.clearSilenceTimer();
      if (wasOpen) this.emit('close');
    });
  }

  private opened(err: Error | null | undefined, callback: Callback): void {
    if (err) {
      callback(err);
      return;
    }
    this.openFlag = true;
    if (this.serial) useDirectIo(this.serial.port);
    callback();
  }

  close(callback?: Callback): void {
    this.clearSilenceTimer();
    const serial = this.serial;
    if (serial) {
      if (serial.isOpen) serial.close((err) => callback?.(err));
      else callback?.();
      return;
    }
    const socket = this.stream instanceof Socket ? this.stream : undefined;
    if (!socket || socket.destroyed) {
      callback?.();
      return;
    }
    if (callback) socket.once('close', () => callback());
    socket.destroy();
  }

  destroy(callback?: Callback): void {
    this.close(callback);
  }

  /** The serial port itself, for raw (non-Modbus) exchanges of custom data streams. */
  get rawPort(): RawPort | undefined {
    return this.openFlag ? this.serial : undefined;
  }

  /** Call just before the client writes the request: how its reply is framed. */
  expect(reply: ExpectedReply): void {
    this.expected = reply;
  }

  /**
   * Starts an exchange (`request` undefined: raw bytes): drops what is buffered and returns the
   * stray bytes since the last exchange ended (between exchanges, or left unframed by the last
   * one), late replies found among them not included. From now on a frame of the request's unit
   * and shape is its reply: a late reply awaited of that shape is set aside for the exchange if
   * it is the identical request's, else given up (awaited-late-replies.ts); others stay watched.
   */
  begin(request?: ExpectedReply): number {
    const strays = Math.max(0, this.takeUnmatched() - this.lateBetween);
    if (request) this.awaitedLate.beginExchange(request);
    this.capture = Buffer.alloc(0);
    this.lateDuring = 0;
    this.lateBetween = 0;
    this.lateFrames = [];
    return strays;
  }

  /**
   * A request timed out: its reply may still come (the bus sends nothing of its shape meanwhile).
   * It is watched for `watchMs`, the configured guard, until the bus says how long it guards it.
   */
  awaitLate(request: AwaitedLateReply, watchMs: number): void {
    this.awaitedLate.add(request, watchMs);
    this.scanLate(Buffer.alloc(0)); // it may already be complete in what was received
  }

  /** The client's request (unit, PDU, CRC), written now. */
  write(frame: Buffer): void {
    const stream = this.stream;
    if (!stream || !this.openFlag) return;
    const expected = this.expected;
    this.expected = undefined;
    if (expected) {
      const late = this.awaitedLate.current().filter((a) => a.unit === expected.unit)
        .map((a) => ({ functionCode: a.functionCode, frameLength: replyFrameLength(a.functionCode, a.quantity) ?? 0 }));
      this.framer.begin(frame, expected, this.options.echo, late);
    }
    stream.write(frame);
    this.lastSendDoneMs = hrClock() + frame.length * this.options.charMs;
  }

  /** What the framer saw in this exchange so far, and the late replies among the other bytes. */
  verdict(): LineVerdict {
    return { ...this.framer.verdict(), lateBytes: this.lateDuring };
  }

  /** The late replies of earlier requests found since the exchange began (whole frames). */
  lateFramesSinceBegin(): readonly Buffer[] {
    return this.lateFrames;
  }

  /** Ends the exchange: from now on every byte is a stray. */
  end(): void {
    this.framer.end();
    this.clearSilenceTimer();
    this.awaitedLate.restore();
  }

  /** Bytes received but not handed over as a frame since the last call; forgets them. */
  takeUnmatched(): number {
    const count = this.between + (this.framer.active ? this.framer.unframed : 0);
    this.between = 0;
    this.framer.end();
    return count;
  }

  private receive(chunk: Buffer): void {
    this.lastReceiveMs = hrClock();
    const awaited = this.awaitedLate.current();
    // Judged as the bytes arrive, before the scan below takes the late frames among them.
    if (this.framer.active) this.framer.stillAwaited(awaited);
    if (awaited.length > 0) this.scanLate(chunk);
    if (!this.framer.active) {
      this.between += chunk.length;
      return;
    }
    const frame = this.framer.push(chunk);
    if (frame) {
      this.clearSilenceTimer();
      this.emit('data', frame);
    } else if (this.framer.awaitingLonger()) {
      this.armSilenceTimer();
    }
  }

  private scanLate(chunk: Buffer): void {
    this.capture = Buffer.concat([this.capture, chunk]);
    if (this.capture.length > CAPTURE_LIMIT) this.capture = this.capture.subarray(this.capture.length - CAPTURE_LIMIT);
    const frames = findLateFrames(this.capture, this.awaitedLate.current());
    if (frames.length === 0) return;
    const now = this.clock.now();
    const kept: Buffer[] = [];
    let from = 0;
    for (const frame of frames) {
      kept.push(this.capture.subarray(from, frame.offset));
      from = frame.offset + frame.length;
      if (this.framer.active) this.lateDuring += frame.length;
      else this.lateBetween += frame.length;
      this.lateFrames.push(Buffer.from(this.capture.subarray(frame.offset, frame.offset + frame.length)));
      const request = frame.request;
      this.awaitedLate.remove(request);
      this.onLate(frame.unit, now - request.sentAt, { functionCode: request.functionCode, quantity: request.quantity });
    }
    kept.push(this.capture.subarray(from));
    this.capture = Buffer.concat(kept);
  }

  /** Waiting for a longer frame than asked: if the line goes quiet, hand over the asked length. */
  private armSilenceTimer(): void {
    this.clearSilenceTimer();
    const quietMs = Math.max(2, Math.ceil(this.config.kind === 'tcp' ? 0 : this.config.interFrameDelayMs));
    this.silenceTimer = setTimeout(() => {
      this.silenceTimer = undefined;
      const frame = this.framer.flush();
      if (frame) this.emit('data', frame);
    }, quietMs);
  }

  private clearSilenceTimer(): void {
    if (this.silenceTimer !== undefined) clearTimeout(this.silenceTimer);
    this.silenceTimer = undefined;
  }
}
