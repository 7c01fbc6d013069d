// Typed errors of the southbound engine: what went wrong on the wire, and why the bus refused a request.
import { QueueFullError } from '../../core/queue-full-error.js';

/** Names of the standard Modbus exception codes (index = code). */
const EXCEPTION_NAMES: Record<number, string> = {
  1: 'Illegal function',
  2: 'Illegal data address',
  3: 'Illegal data value',
  4: 'Slave device failure',
  5: 'Acknowledge',
  6: 'Slave device busy',
  7: 'Negative acknowledge',
  8: 'Memory parity error',
  10: 'Gateway path unavailable',
  11: 'Gateway target device failed to respond',
};

export function exceptionName(code: number): string {
  return EXCEPTION_NAMES[code] ?? `Unknown exception ${code}`;
}

/** Base class: every error the engine produces is a ModbusEngineError. */
export class ModbusEngineError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The unit did not answer within the request timeout. */
export class ModbusTimeoutError extends ModbusEngineError {
  /**
   * `request`: what was on the wire (RTU framing), whose late reply is now watched for; undefined
   * when the transport does not say (the whole unit is then guarded).
   */
  constructor(readonly unit: number, readonly timeoutMs: number, readonly request?: { functionCode: number; quantity: number; address?: number }) {
    super(`unit ${unit} did not answer within ${timeoutMs} ms`);
  }
}

/** The unit answered with a Modbus exception response. */
export class ModbusExceptionError extends ModbusEngineError {
  readonly exceptionName: string;
  constructor(readonly unit: number, readonly code: number) {
    super(`unit ${unit} answered with Modbus exception ${code} (${exceptionName(code)})`);
    this.exceptionName = exceptionName(code);
  }
  /** 6 "slave device busy" or 5 "acknowledge" (still working on it): the request may be repeated shortly. */
  get isBusy(): boolean {
    return this.code === 6 || this.code === 5;
  }
  /** 10/11: a gateway in between could not reach the unit (treated like a timeout for health). */
  get isGatewayNoResponse(): boolean {
    return this.code === 10 || this.code === 11;
  }
}

/** A reply arrived but was malformed (wrong length, unexpected unit or function). */
export class ModbusFrameError extends ModbusEngineError {
  constructor(readonly unit: number, detail: string) {
    super(`unit ${unit}: malformed reply: ${detail}`);
  }
}

/** A reply arrived with a bad CRC (noise on the line, or two talkers at once). */
export class ModbusCrcError extends ModbusFrameError {
  constructor(unit: number) {
    super(unit, 'CRC error');
  }
}

/** A complete reply with consistent byte count and CRC, but not of the length asked (a device or map bug). */
export class ModbusLengthError extends ModbusFrameError {}

/** What an RTU line's local echo (RS-485 adapters that return every request byte) looks like. */
export type EchoProblem = 'echoes' | 'differs' | 'missing';

const ECHO_HINTS: Record<EchoProblem, string> = {
  echoes: 'the line echoes requests: set echo: true on this bus',
  differs: 'the local echo differs from the request (a collision on the line, or a garbled echo)',
  missing: 'no local echo before the reply: this line does not echo requests, set echo: false on this bus',
};

/** The bus's echo setting does not match the line (or the echo was garbled). */
export class LineEchoError extends ModbusFrameError {
  readonly hint: string;
  constructor(unit: number, readonly problem: EchoProblem) {
    super(unit, ECHO_HINTS[problem]);
    this.hint = ECHO_HINTS[problem];
  }
}

/** The port or connection is not open, or closed while a request was waiting for its answer. */
export class PortClosedError extends ModbusEngineError {
  constructor(readonly reason: string, options?: { cause?: unknown }) {
    super(`port closed: ${reason}`, options);
  }
}

/** Opening the serial port or TCP connection failed. */
export class PortOpenError extends ModbusEngineError {
  constructor(readonly target: string, reason: string, options?: { cause?: unknown }) {
    super(`cannot open ${target}: ${reason}`, options);
  }
}

/**
 * The bus refused the request: the unit is in cool-down after repeated failures; `lastFailure`
 * names the last of them (timeouts, late replies, "busy", untrustworthy replies).
 */
export class UnitCoolingDownError extends ModbusEngineError {
  constructor(readonly unit: number, readonly retryInMs: number, readonly lastFailure = 'timeouts', readonly waitedMs?: number) {
    super(`unit ${unit} is cooling down after repeated ${lastFailure} (next probe in ${Math.max(0, Math.round(retryInMs))} ms)${waitedText(waitedMs)}`);
  }
}

/**
 * The bus refused the request: a request of the unit timed out on an RTU line and its reply may
 * still come, so nothing that reply could be taken for is sent until it came or the late-reply
 * guard ran out. `lateSeen`: the unit has answered late before (the whole unit waits).
 */
export class UnitLateReplyPendingError extends ModbusEngineError {
  constructor(readonly unit: number, readonly retryInMs: number, readonly lateSeen = false, readonly waitedMs?: number) {
    const why = lateSeen ? 'answers after its timeout and a late reply may still come' : 'timed out and its reply may still come';
    super(`unit ${unit} ${why}: not asked this request for ${Math.max(0, Math.round(retryInMs))} ms (late-reply guard)${waitedText(waitedMs)}`);
  }
}

/** The end of a refusal's message when the request had waited in the queue for its unit. */
function waitedText(waitedMs: number | undefined): string {
  return waitedMs === undefined ? '' : `; the request waited ${Math.max(0, Math.round(waitedMs))} ms in the queue (writes.maxWaitMs)`;
}

/** The bus refused the request: the port is down and being reopened. */
export class BusDownError extends ModbusEngineError {
  constructor(readonly bus: string, readonly reason: string) {
    super(`bus ${bus} is down: ${reason}`);
  }
}

/** The bus refused the request: it was stopped. */
export class BusStoppedError extends ModbusEngineError {
  constructor(readonly bus: string) {
    super(`bus ${bus} is stopped`);
  }
}

/**
 * The request's owner cancelled it (its AbortSignal aborted: a share client that left, a page
 * request closed) before it went on the line, or between the transactions of a request that takes
 * several: nothing more of it was sent. Counted by the bus, never logged per request.
 */
export class RequestCancelledError extends ModbusEngineError {
  constructor(readonly unit: number) {
    super(`request to unit ${unit} cancelled by its owner before it went on the line`);
  }
}

/**
 * A request waited in the queue past its deadline (RequestOptions.queueDeadlineMs: its requester
 * has given up by then, a share client's master for one) and left it without being sent.
 */
export class RequestExpiredError extends ModbusEngineError {
  constructor(readonly unit: number, readonly waitedMs: number) {
    super(`request to unit ${unit} left the queue unsent after ${Math.round(waitedMs)} ms (its queue deadline)`);
  }
}

/** A request had invalid arguments (unit, address, count out of the Modbus ranges). */
export class InvalidRequestError extends ModbusEngineError {}

/**
 * The bus kept the request from the device (late-reply guard, cool-down, bus down or stopped, its
 * queue full): the failure says nothing about the device.
 */
export function keptFromDevice(err: unknown): boolean {
  return err instanceof UnitLateReplyPendingError || err instanceof UnitCoolingDownError || err instanceof BusDownError
    || err instanceof BusStoppedError || err instanceof QueueFullError || err instanceof RequestExpiredError;
}

/** Exception 2 (illegal data address) and 3 (illegal data value): the request, not the device, is wrong. */
export function isRefusal(err: unknown): err is ModbusExceptionError {
  return err instanceof ModbusExceptionError && (err.code === 2 || err.code === 3);
}
