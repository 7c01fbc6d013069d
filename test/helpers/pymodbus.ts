// Starts test/helpers/pymodbus_slave.py (pymodbus 3.0 exists only under Debian's /usr/bin/python3).
import { fileURLToPath } from 'node:url';
import { startChild } from './child.js';
import { requirePythonModules } from './peers.js';
import { waitFor } from './wait.js';

const SCRIPT = fileURLToPath(new URL('./pymodbus_slave.py', import.meta.url));
export const PYTHON = '/usr/bin/python3';

export interface PymodbusSlave {
  /** TCP port (tcp modes) or device path (serial mode), as printed by the script. */
  where: string;
  port: number;
  stop(): Promise<void>;
}

export interface SlaveOptions {
  units?: number[];
  garbleUnit?: number;
  busyUnit?: number;
  busyCount?: number;
}

export async function startPymodbus(
  mode: { tcp: number } | { rtuTcp: number } | { serial: string }, options: SlaveOptions = {},
): Promise<PymodbusSlave> {
  requirePythonModules(PYTHON, 'serial' in mode ? ['pymodbus', 'serial_asyncio'] : ['pymodbus']);
  const args = [SCRIPT];
  if ('tcp' in mode) args.push('--tcp', String(mode.tcp));
  else if ('rtuTcp' in mode) args.push('--rtu-tcp', String(mode.rtuTcp));
  else args.push('--serial', mode.serial);
  args.push('--units', (options.units ?? [1]).join(','));
  if (options.garbleUnit !== undefined) args.push('--garble-unit', String(options.garbleUnit));
  if (options.busyUnit !== undefined) {
    args.push('--busy-unit', String(options.busyUnit), '--busy-count', String(options.busyCount ?? 1));
  }
  const child = startChild(PYTHON, args);
  let where = '';
  try {
    where = await waitFor(() => {
      if (child.exited()) throw new Error(`pymodbus slave exited: ${child.output()}`);
      return /READY (\S+)/.exec(child.output())?.[1];
    }, { what: 'pymodbus READY', timeoutMs: 20_000 });
  } catch (err) {
    await child.stop();
    throw err;
  }
  return { where, port: Number(where), stop: () => child.stop() };
}
