// Simulator entry point: load a map, build the devices, start the requested servers.
import { readFile } from 'node:fs/promises';
import type { Logger } from 'fieldgate/workspace-kit';
import { parseSimMap, type SimMap } from './map-file.js';
import { startRtuOverTcpServer, startSerialRtuServer, type SerialRtuServer } from './rtu-servers.js';
import { Simulator } from './simulator.js';
import type { TcpListener } from './tcp-listener.js';
import { startModbusTcpServer } from './tcp-server.js';
import type { LineSettings } from './timing.js';

export { Simulator } from './simulator.js';
export type { Outcome, UnitCounters, LineCounters } from './simulator.js';
export type { UnitFault, DisappearFault } from './faults.js';
export type { SimMap, SimUnitSpec } from './map-file.js';
export { parseSimMap, validateSimMap } from './map-file.js';
export { placeProfiles, profileUnit, siteDeviceBlock, SUNSPEC_BASE, type Placement, type ProfileUnit } from './profile-map.js';
export type { HeldValue, ProfilePoint } from './profile-values.js';
export { lineTiming, transactionMicros, type LineSettings, type LineTiming } from './timing.js';
export { createPtyPair, type PtyPair } from './pty-pair.js';
export { startModbusTcpServer } from './tcp-server.js';
export { startRtuOverTcpServer, startSerialRtuServer } from './rtu-servers.js';

export class SimMapError extends Error {
  constructor(readonly source: string, readonly problems: string[]) {
    super(`${source}: ${problems.length} problem(s) in the register map:\n  ${problems.join('\n  ')}`);
    this.name = 'SimMapError';
  }
}

export async function loadSimMapFile(path: string): Promise<SimMap> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new SimMapError(path, [`cannot read the file: ${(err as Error).message}`]);
  }
  const result = parseSimMap(text);
  if (!result.ok) throw new SimMapError(path, result.problems);
  return result.map;
}

export interface SimulationOptions {
  map: SimMap;
  logger: Logger;
  /** Modbus TCP listener (port 0 = ephemeral). */
  tcp?: { host: string; port: number };
  /** RTU on a serial port (e.g. one end of a socat pty pair). */
  rtu?: { path: string };
  /** RTU frames on TCP (a serial-to-Ethernet converter). */
  rtuOverTcp?: { host: string; port: number };
  /** Line settings for rtu and rtu-over-tcp (default 9600 8E1). */
  line?: LineSettings;
  baudAccurate?: boolean;
  /** RTU lines echo every request byte back before the reply (RS-485 local echo). */
  echo?: boolean;
  /** RTU lines ignore (and count) requests that begin less than t3.5 after the previous frame; needs baudAccurate. */
  strict?: boolean;
}

export interface Simulation {
  simulator: Simulator;
  tcp?: TcpListener;
  rtu?: SerialRtuServer;
  rtuOverTcp?: TcpListener;
  close(): Promise<void>;
}

export const DEFAULT_LINE: LineSettings = { baud: 9600, parity: 'even', dataBits: 8, stopBits: 1 };

export async function startSimulation(options: SimulationOptions): Promise<Simulation> {
  const simulator = new Simulator(options.map, { logger: options.logger });
  const line = options.line ?? DEFAULT_LINE;
  const rtuOptions = { simulator, logger: options.logger, line, baudAccurate: options.baudAccurate, echo: options.echo, strict: options.strict };
  const started: Simulation = { simulator, close: async () => {} };
  const closers: Array<() => Promise<void>> = [];
  started.close = async () => {
    await Promise.all(closers.map((close) => close().catch(() => undefined)));
  };
  try {
    if (options.tcp !== undefined) {
      started.tcp = await startModbusTcpServer({ simulator, logger: options.logger, ...options.tcp });
      closers.push(started.tcp.close);
    }
    if (options.rtu !== undefined) {
      started.rtu = await startSerialRtuServer(options.rtu.path, rtuOptions);
      closers.push(started.rtu.close);
    }
    if (options.rtuOverTcp !== undefined) {
      started.rtuOverTcp = await startRtuOverTcpServer(options.rtuOverTcp.host, options.rtuOverTcp.port, rtuOptions);
      closers.push(started.rtuOverTcp.close);
    }
  } catch (err) {
    await started.close();
    throw err;
  }
  return started;
}
