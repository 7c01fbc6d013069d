// What the bus needs of a Modbus connection (one serial port or TCP connection); the adapter
// implementing it on modbus-serial is transport.ts.
import type { BusConfig } from '../../core/config/site-types.js';
import type { RawReplyWindow } from './raw-exchange.js';

/** What a request's reply looks like on the wire: its function code and quantity (registers, bits; 1 for FC5/FC6). */
export interface ReplyShape {
  functionCode: number;
  quantity: number;
  /** The request's start address, when known: a request of the same shape and address is identical (its late reply is a true reading). */
  address?: number;
}

/** How a discarded Modbus TCP reply's reason starts when its transaction id was not awaited (bus-outcomes.ts warns of it). */
export const FOREIGN_TRANSACTION_ID = 'transaction id';

/** `request`: the shape of the request it answers (undefined: the transport does not say; all of the unit is released). */
export type LateReplyListener = (unit: number, answeredAfterMs: number, request?: ReplyShape) => void;

export interface ModbusTransport {
  /** Human-readable target ("/dev/ttyUSB0" or "10.0.0.5:502"), for logs. */
  readonly target: string;
  /** A Modbus reply resolves only after the line stayed quiet for the inter-frame delay (RTU framing). */
  readonly keepsSilenceAfterReply?: boolean;
  open(): Promise<void>;
  close(): Promise<void>;
  /**
   * Called once per open session when the port vanishes or the peer drops the connection;
   * `outOfStep` when the transport dropped it itself because replies no longer line up.
   */
  onClose(listener: (reason: string, outOfStep?: boolean) => void): void;
  /** Called for every received frame or byte run that was not exactly the awaited reply (never decoded). */
  onDiscard(listener: (reason: string) => void): void;
  /**
   * RTU framing: called when the reply of a timed-out request (`request`: its shape) arrives after
   * all (`answeredAfterMs` after the request went out). Until then, or until its guard has run
   * out, the bus must not ask that unit a request whose reply has the same shape: only then can
   * no late frame pass for the reply to a new request.
   */
  onLateReply?(listener: LateReplyListener): void;
  /**
   * RTU framing: the bus guards the late reply of `unit`'s timed-out request of `request`'s shape
   * for `guardMs` from now. The transport watches for it exactly as long, then forgets it (a frame
   * after that is a foreign one, discarded). Until told, it watches for the configured guard.
   */
  watchLateReplyFor?(unit: number, request: ReplyShape, guardMs: number): void;
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
  /**
   * RTU framing only: sends a broadcast frame (unit 0, CRC included) after the inter-frame
   * silence, awaits no reply, and resolves once the frame has left and `turnaroundMs` passed.
   */
  broadcast?(frame: Buffer, turnaroundMs: number): Promise<void>;
}

export type TransportFactory = (config: BusConfig) => ModbusTransport;

export function describeTarget(config: BusConfig): string {
  return config.kind === 'rtu' ? config.path : `${config.host}:${config.port}`;
}

