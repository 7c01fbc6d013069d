// What the bus needs of a Modbus connection (one serial port or TCP connection); the adapter
// implementing it on modbus-serial is transport.ts.
import type { BusConfig } from '../../core/config/site-types.js';
import type { RawReplyWindow } from './raw-exchange.js';

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
   * RTU framing: called when the reply of a timed-out request arrives after all (`answeredAfterMs`
   * after the request went out). Until then, or until its guard has run out, the bus must not ask
   * that unit again: only then can no late frame pass for the reply to a new request.
   */
  onLateReply?(listener: (unit: number, answeredAfterMs: number) => void): void;
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

export function describeTarget(config: BusConfig): string {
  return config.kind === 'rtu' ? config.path : `${config.host}:${config.port}`;
}

