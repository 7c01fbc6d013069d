// The master side of one southbound benchmark run, in a process of its own so its CPU time is
// fieldgate's alone (the simulator stays in the parent). It loads the bus, transport and planner
// from the source tree given as `root`: this checkout, or an export of the baseline commit.
// Argument: one JSON object (MasterRun); prints one JSON line (MasterResult).
import { pathToFileURL } from 'node:url';
import type { DeviceConfig, RtuBusConfig } from '../../src/core/config/site-types.js';
import type { ReadRequest } from '../../src/core/modbus/plan.js';
import type { Bus as BusType } from '../../src/field/modbus/bus.js';
import { benchDevice, type Layout, type PollerResult } from './southbound-device.js';

export interface MasterRun {
  root: string;
  path: string;
  baud: number;
  parity: 'none' | 'even' | 'odd';
  layout: Layout;
  deviceCount: number;
  windowMs: number;
  /** Planned reads run before the measured window (default none). */
  warmupMs?: number;
}

export interface MasterResult {
  fieldgate: PollerResult;
  naive: PollerResult;
  /** CPU (user + system) of this process while the planned reads ran, µs. */
  fieldgateCpuMicros: number;
}

type Work = Array<{ unit: number; requests: ReadRequest[] }>;
type WidthOf = (type: DeviceConfig['points'][number]['type'], length?: number) => number;

async function drive(bus: BusType, work: Work, windowMs: number, widthOf: WidthOf): Promise<PollerResult> {
  const result: PollerResult = { requests: 0, usefulRegisters: 0, wireRegisters: 0, seconds: 0, errors: 0 };
  const started = performance.now();
  const deadline = started + windowMs;
  // Every device's poller submits its whole cycle at once, as the real pollers do; the bus takes turns.
  while (performance.now() < deadline) {
    await Promise.all(work.flatMap(({ unit, requests }) => requests.map(async (r) => {
      try {
        await bus.read(unit, r.table, r.start, r.count);
        result.requests += 1;
        result.wireRegisters += r.count;
        result.usefulRegisters += r.points.reduce((sum, p) => sum + widthOf(p.type, p.length), 0);
      } catch {
        result.errors += 1;
      }
    })));
  }
  result.seconds = (performance.now() - started) / 1000;
  return result;
}

export async function runMaster(run: MasterRun): Promise<MasterResult> {
  const from = (path: string) => import(pathToFileURL(`${run.root}/${path}`).href);
  const { Bus } = await from('src/field/modbus/bus.ts') as typeof import('../../src/field/modbus/bus.js');
  const { createModbusTransport } = await from('src/field/modbus/transport.ts') as typeof import('../../src/field/modbus/transport.js');
  const { planReads } = await from('src/core/modbus/plan.ts') as typeof import('../../src/core/modbus/plan.js');
  const { widthOf } = await from('src/core/points/types.ts') as typeof import('../../src/core/points/types.js');
  const { defaultInterFrameDelayMs } = await from('src/core/config/buses.ts') as typeof import('../../src/core/config/buses.js');
  const { silentLogger } = await from('src/ops/log.ts') as typeof import('../../src/ops/log.js');
  const devices = Array.from({ length: run.deviceCount }, (_, i) => benchDevice(i + 1, run.layout));
  const config: RtuBusConfig = {
    kind: 'rtu', name: 'bench', path: run.path, baudRate: run.baud, parity: run.parity, dataBits: 8, stopBits: 1, timeoutMs: 3000,
    interFrameDelayMs: defaultInterFrameDelayMs(run.baud, 8, run.parity, 1),
    reconnect: { initialMs: 100, maxMs: 1000, jitter: 0 }, cooldown: { afterTimeouts: 100, initialMs: 1000, maxMs: 1000 }, busyRetries: 0,
  };
  const bus = new Bus({ config, transportFactory: createModbusTransport, logger: silentLogger() });
  bus.start();
  try {
    const planned = devices.map((d) => ({ unit: d.unitId, requests: planReads(d.points, d.limits) }));
    const naive = devices.map((d) => ({ unit: d.unitId, requests: d.points.map((p) => ({ table: p.table, start: p.address, count: widthOf(p.type, p.length), points: [p] })) }));
    await drive(bus, planned.map((w) => ({ ...w, requests: w.requests.slice(0, 1) })), 1, widthOf); // warm-up: port open
    // Warm-up: the planned reads for a while first, so the window measures the steady cost a
    // long-running daemon pays, not V8 compiling the code path (~a third of an 8 s window's CPU).
    await drive(bus, planned, run.warmupMs ?? 0, widthOf);
    const cpuBefore = process.cpuUsage();
    const fieldgate = await drive(bus, planned, run.windowMs, widthOf);
    const cpu = process.cpuUsage(cpuBefore);
    const naiveResult = await drive(bus, naive, run.windowMs, widthOf);
    return { fieldgate, naive: naiveResult, fieldgateCpuMicros: cpu.user + cpu.system };
  } finally {
    await bus.stop();
  }
}

const argument = process.argv[2];
if (argument !== undefined && process.argv[1]?.endsWith('southbound-master.ts')) {
  const result = await runMaster(JSON.parse(argument) as MasterRun);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}
