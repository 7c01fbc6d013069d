// Command-line options that name one bus for the commissioning tools (read, write, scan).
import type { BusConfig, Parity } from '../core/config/site-types.js';
import { BUS_DEFAULTS, defaultInterFrameDelayMs } from '../core/config/buses.js';

export const BUS_OPTIONS = {
  bus: { type: 'string' },
  baud: { type: 'string' },
  parity: { type: 'string' },
  'data-bits': { type: 'string' },
  'stop-bits': { type: 'string' },
  timeout: { type: 'string' },
  'rtu-over-tcp': { type: 'boolean' },
  echo: { type: 'boolean' },
} as const;

export const BUS_OPTIONS_HELP = `  --bus PATH|HOST:PORT   serial device (Modbus RTU) or TCP peer (Modbus TCP)
  --baud N               serial speed (default 9600)
  --parity none|even|odd (default even)
  --data-bits 7|8        (default 8)
  --stop-bits 1|2        (default 1)
  --rtu-over-tcp         RTU framing through a TCP serial server
  --echo                 the RS-485 adapter echoes each request: expect and strip it (echo: true)
  --timeout MS           per-request timeout (default 1000)`;

export interface BusOptionValues {
  bus?: string;
  baud?: string;
  parity?: string;
  'data-bits'?: string;
  'stop-bits'?: string;
  timeout?: string;
  'rtu-over-tcp'?: boolean;
  echo?: boolean;
}

export class UsageError extends Error {}

export function integerOption(name: string, text: string | undefined, fallback: number | undefined, min: number, max: number): number {
  if (text === undefined) {
    if (fallback === undefined) throw new UsageError(`--${name} is required`);
    return fallback;
  }
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new UsageError(`--${name}: "${text}" is not a whole number from ${min} to ${max}`);
  }
  return value;
}

const HOST_PORT = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;

/** The bus the options describe, with the same defaults as a site file, or a UsageError. */
export function busFromOptions(values: BusOptionValues, baudOverride?: number): BusConfig {
  const target = values.bus;
  if (target === undefined || target === '') throw new UsageError('--bus is required (a serial path like /dev/ttyUSB0, or HOST:PORT)');
  const timeoutMs = integerOption('timeout', values.timeout, 1000, 1, 60_000);
  const common = { name: 'cli', timeoutMs, reconnect: BUS_DEFAULTS.reconnect, cooldown: BUS_DEFAULTS.cooldown, busyRetries: BUS_DEFAULTS.busyRetries };
  const hostPort = HOST_PORT.exec(target);
  if (hostPort && !target.startsWith('/')) {
    const host = hostPort[1].replace(/^\[|\]$/g, '');
    const port = integerOption('bus port', hostPort[2], undefined, 1, 65535);
    if (values['rtu-over-tcp']) return { kind: 'rtu-over-tcp', host, port, interFrameDelayMs: BUS_DEFAULTS.rtuOverTcp.interFrameDelayMs, echo: values.echo === true, ...common };
    if (values.echo) throw new UsageError('--echo is for RTU framing (a serial line or --rtu-over-tcp), not Modbus TCP');
    return { kind: 'tcp', host, port, maxInFlight: 1, ...common };
  }
  const baudRate = baudOverride ?? integerOption('baud', values.baud, BUS_DEFAULTS.rtu.baudRate, 50, 4_000_000);
  const parity = (values.parity ?? BUS_DEFAULTS.rtu.parity) as Parity;
  if (!['none', 'even', 'odd'].includes(parity)) throw new UsageError(`--parity: "${values.parity}" must be none, even or odd`);
  const dataBits = integerOption('data-bits', values['data-bits'], 8, 7, 8) as 7 | 8;
  const stopBits = integerOption('stop-bits', values['stop-bits'], 1, 1, 2) as 1 | 2;
  return {
    kind: 'rtu', path: target, baudRate, parity, dataBits, stopBits,
    interFrameDelayMs: defaultInterFrameDelayMs(baudRate, dataBits, parity, stopBits), echo: values.echo === true, ...common,
  };
}
