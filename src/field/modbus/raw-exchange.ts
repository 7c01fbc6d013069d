// A raw (non-Modbus) exchange on a serial line the Modbus client owns: write the bytes, wait until
// they have left, then collect the reply until the line goes quiet. Custom data streams on a
// shared RS-485 line run it inside the bus's turn, so no Modbus transaction overlaps it.
import { afterPendingIo, type Timers } from '../../core/time.js';

export interface RawReplyWindow {
  /** Collecting stops this long after the request has left, reply complete or not. */
  replyTimeoutMs: number;
  /** After at least one reply byte, this much silence ends the reply. */
  quietMs: number;
  /** Collecting stops at this size (the reply is cut there). */
  maxReplyBytes: number;
}

/** What the exchange needs of a serial port (serialport's SerialPort has all of it). */
export interface RawPort {
  write(data: Buffer, callback: (err: Error | null | undefined) => void): unknown;
  drain(callback: (err: Error | null | undefined) => void): void;
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  off(event: 'data', listener: (chunk: Buffer) => void): unknown;
}

/** Resolves with the reply (empty when nothing was heard); rejects only when the write fails. */
export function exchangeRaw(port: RawPort, request: Buffer, window: RawReplyWindow, timers: Timers): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    let cancelQuiet: (() => void) | undefined;
    let cancelDeadline: (() => void) | undefined;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      port.off('data', onData);
      cancelQuiet?.();
      cancelDeadline?.();
      if (err) reject(err);
      else resolve(Buffer.concat(chunks, size).subarray(0, window.maxReplyBytes));
    };
    function onData(chunk: Buffer): void {
      if (done) return;
      chunks.push(chunk);
      size += chunk.length;
      if (size >= window.maxReplyBytes) return finish();
      cancelQuiet?.();
      // The quiet is confirmed once what already waits has been read (a stalled loop runs its timers first).
      cancelQuiet = timers.setTimer(() => {
        cancelQuiet = afterPendingIo(() => finish());
      }, window.quietMs);
    }
    // Listen before writing: a fast device may answer before the drain callback runs.
    port.on('data', onData);
    port.write(request, (err) => {
      if (err) return finish(err);
      port.drain((drainErr) => {
        if (drainErr) return finish(drainErr);
        if (!done) cancelDeadline = timers.setTimer(() => finish(), window.replyTimeoutMs);
      });
    });
  });
}

/** `bytes` without the first occurrence of each of `frames`. */
export function withoutFrames(bytes: Buffer, frames: readonly Buffer[]): Buffer {
  let rest = bytes;
  for (const frame of frames) {
    const at = rest.indexOf(frame);
    if (at >= 0) rest = Buffer.concat([rest.subarray(0, at), rest.subarray(at + frame.length)]);
  }
  return rest;
}
