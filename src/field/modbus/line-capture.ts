// The commissioning page's view of a line: a transport wrapper that, only while someone watches
// (a listener is attached), records each transaction as its request and reply PDUs (function code
// and data, rebuilt from the call and its answer: not the wire bytes with address, CRC or MBAP)
// with the answer time and verdict, in a bounded ring. Unwatched it only passes calls through.
import type { RawReplyWindow } from './raw-exchange.js';
import type { ModbusTransport, ReplyShape } from './transport-types.js';
import { systemTime, type Clock, type WallClock } from '../../core/time.js';

export interface LineFrame {
  /** Epoch ms the request went out (request) or the answer came (reply). */
  at: number;
  direction: 'request' | 'reply' | 'discarded';
  unit: number;
  /** Modbus function code (0 for raw exchanges and discards). */
  fn: number;
  /** PDU bytes as hex ("03 00 00 00 02"); empty when no reply came. */
  hex: string;
  /** Replies: ms since the request. */
  answerMs?: number;
  /** ok, or the error's name (ModbusTimeoutError ...), or the discard's reason. */
  verdict: string;
}

const hex = (bytes: readonly number[]) => bytes.map((b) => b.toString(16).padStart(2, '0')).join(' ');
const word = (value: number) => [(value >> 8) & 0xff, value & 0xff];
const packBits = (bits: readonly boolean[]) => Array.from({ length: Math.ceil(bits.length / 8) }, (_, i) => bits.slice(i * 8, i * 8 + 8).reduce((acc, bit, j) => acc | (bit ? 1 << j : 0), 0));

export class LineCapture {
  private readonly frames: LineFrame[] = [];
  private readonly listeners = new Set<(frame: LineFrame) => void>();
  private readonly enders = new Map<(frame: LineFrame) => void, () => void>();

  /** `framesKept`: the last frames kept for the page (gateway.web.lineFramesKept); older ones go. */
  /** `time`: the wall clock for each frame's `at` (shown), the monotonic one for `answerMs`. */
  constructor(readonly framesKept: number, readonly time: Clock & WallClock = systemTime) {}

  get watched(): boolean {
    return this.listeners.size > 0;
  }

  /**
   * The frames kept (oldest first) and the live ones from now on; the returned function stops it.
   * `onEnd` is called if the line goes away (its bus removed or replaced by a reload).
   */
  watch(listener: (frame: LineFrame) => void, onEnd?: () => void): { recent: LineFrame[]; stop: () => void } {
    this.listeners.add(listener);
    if (onEnd) this.enders.set(listener, onEnd);
    return { recent: [...this.frames], stop: () => { this.listeners.delete(listener); this.enders.delete(listener); } };
  }

  /** The line is gone: every watcher is told once and let go. */
  end(): void {
    const enders = [...this.enders.values()];
    this.listeners.clear();
    this.enders.clear();
    for (const onEnd of enders) onEnd();
  }

  record(frame: LineFrame): void {
    this.frames.push(frame);
    if (this.frames.length > this.framesKept) this.frames.splice(0, this.frames.length - this.framesKept);
    for (const listener of this.listeners) listener(frame);
  }

  /** `call` runs the transaction; the request and its answer are recorded while watched. */
  async around<T>(unit: number, fn: number, request: number[], call: () => Promise<T>, reply: (result: T) => number[]): Promise<T> {
    if (!this.watched) return call();
    const sent = this.time.now();
    // Function code first, except for raw (non-Modbus) exchanges.
    const pdu = (data: number[]) => hex(fn === 0 ? data : [fn, ...data]);
    this.record({ at: this.time.wallNow(), direction: 'request', unit, fn, hex: pdu(request), verdict: 'sent' });
    try {
      const result = await call();
      this.record({ at: this.time.wallNow(), direction: 'reply', unit, fn, hex: pdu(reply(result)), answerMs: Math.round(this.time.now() - sent), verdict: 'ok' });
      return result;
    } catch (err) {
      const at = this.time.wallNow();
      const code = (err as { code?: unknown }).code;
      const exception = typeof code === 'number' && (err as Error).name === 'ModbusExceptionError' ? hex([fn | 0x80, code]) : '';
      this.record({ at, direction: 'reply', unit, fn, hex: exception, answerMs: Math.round(this.time.now() - sent), verdict: (err as Error).name || 'Error' });
      throw err;
    }
  }
}

/** Per bus: its line's capture, each keeping `framesKept` frames. */
export class LineCaptures extends Map<string, LineCapture> {
  constructor(readonly framesKept: number) {
    super();
  }

  /** A fresh capture for `bus` (a bus replaced by a reload starts afresh; watchers of the old one are ended). */
  open(bus: string): LineCapture {
    this.get(bus)?.end();
    const capture = new LineCapture(this.framesKept);
    this.set(bus, capture);
    return capture;
  }

  /** The bus is gone: whoever watches its line is told (a page reconnects to the bus's next capture, if any). */
  override delete(bus: string): boolean {
    this.get(bus)?.end();
    return super.delete(bus);
  }
}

/** The transport with every transaction passed through `capture`. */
export function capturedTransport(inner: ModbusTransport, capture: LineCapture): ModbusTransport {
  const reads = (fn: number, call: (unit: number, start: number, count: number, timeoutMs: number) => Promise<Uint16Array>) =>
    (unit: number, start: number, count: number, timeoutMs: number) => capture.around(unit, fn, [...word(start), ...word(count)], () => call(unit, start, count, timeoutMs),
      (words) => [words.length * 2, ...Array.from(words).flatMap(word)]);
  const bits = (fn: number, call: (unit: number, start: number, count: number, timeoutMs: number) => Promise<boolean[]>) =>
    (unit: number, start: number, count: number, timeoutMs: number) => capture.around(unit, fn, [...word(start), ...word(count)], () => call(unit, start, count, timeoutMs),
      (values) => { const packed = packBits(values.slice(0, count)); return [packed.length, ...packed]; });
  inner.onDiscard((reason) => { if (capture.watched) capture.record({ at: capture.time.wallNow(), direction: 'discarded', unit: 0, fn: 0, hex: '', verdict: reason }); });
  return {
    get target() { return inner.target; },
    get keepsSilenceAfterReply() { return inner.keepsSilenceAfterReply; },
    open: () => inner.open(),
    close: () => inner.close(),
    onClose: (listener) => inner.onClose(listener),
    onDiscard: (listener) => inner.onDiscard(listener),
    ...(inner.onLateReply ? { onLateReply: (listener: Parameters<NonNullable<ModbusTransport['onLateReply']>>[0]) => inner.onLateReply!(listener) } : {}),
    ...(inner.watchLateReplyFor ? { watchLateReplyFor: (unit: number, request: ReplyShape, guardMs: number) => inner.watchLateReplyFor!(unit, request, guardMs) } : {}),
    readCoils: bits(1, (u, s, c, t) => inner.readCoils(u, s, c, t)),
    readDiscreteInputs: bits(2, (u, s, c, t) => inner.readDiscreteInputs(u, s, c, t)),
    readHoldingRegisters: reads(3, (u, s, c, t) => inner.readHoldingRegisters(u, s, c, t)),
    readInputRegisters: reads(4, (u, s, c, t) => inner.readInputRegisters(u, s, c, t)),
    writeRegister: (unit, address, value, timeoutMs) => capture.around(unit, 6, [...word(address), ...word(value)], () => inner.writeRegister(unit, address, value, timeoutMs), () => [...word(address), ...word(value)]),
    writeRegisters: (unit, address, values, timeoutMs) => capture.around(unit, 16, [...word(address), ...word(values.length), values.length * 2, ...values.flatMap(word)],
      () => inner.writeRegisters(unit, address, values, timeoutMs), () => [...word(address), ...word(values.length)]),
    writeCoil: (unit, address, value, timeoutMs) => capture.around(unit, 5, [...word(address), value ? 0xff : 0, 0], () => inner.writeCoil(unit, address, value, timeoutMs), () => [...word(address), value ? 0xff : 0, 0]),
    writeCoils: (unit, address, values, timeoutMs) => { const packed = packBits(values); return capture.around(unit, 15, [...word(address), ...word(values.length), packed.length, ...packed], () => inner.writeCoils(unit, address, values, timeoutMs), () => [...word(address), ...word(values.length)]); },
    exchangeRaw: (request: Buffer, window: RawReplyWindow) => capture.around(0, 0, [...request], () => inner.exchangeRaw(request, window), (reply) => [...reply]),
    // Without it a bus behind the page's capture could not broadcast at all (bus-request.ts refuses).
    ...(inner.broadcast ? { broadcast: (frame: Buffer, turnaroundMs: number) => capture.around(0, frame[1] ?? 0, [...frame.subarray(2, -2)], () => inner.broadcast!(frame, turnaroundMs), () => []) } : {}),
  };
}
