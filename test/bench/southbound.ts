// Southbound benchmark: registers/s on a baud-accurate simulated RS-485 line, fieldgate's planned
// reads vs the theoretical line limit and vs a naive one-request-per-point poller, same run.
import type { DeviceConfig, PointConfig, RtuBusConfig } from '../../src/core/config/site-types.js';
import { defaultInterFrameDelayMs } from '../../src/core/config/buses.js';
import { silentLogger } from '../../src/ops/log.js';
import { Bus } from '../../src/field/modbus/bus.js';
import { planReads, type ReadRequest } from '../../src/core/modbus/plan.js';
import { createModbusTransport } from '../../src/field/modbus/transport.js';
import { widthOf, type Table, type ValueType } from '../../src/core/points/types.js';
import { createPtyPair, lineTiming, parseSimMap, startSimulation, type SimMap } from '../../packages/simulator/src/index.js';

export interface LineCase {
  baud: number;
  parity: 'none' | 'even' | 'odd';
}

export interface PollerResult {
  requests: number;
  /** Registers that belong to points. */
  usefulRegisters: number;
  /** Registers on the wire, bridged gaps included. */
  wireRegisters: number;
  seconds: number;
  errors: number;
}

export interface SouthboundResult {
  line: string;
  formula: string;
  /** Registers/s with back-to-back 125-register reads and no turnaround at all. */
  limit125: number;
  /** Useful registers/s the line allows for exactly fieldgate's planned requests, no turnaround. */
  planLimit: number;
  fieldgate: PollerResult;
  naive: PollerResult;
}

function point(id: string, table: Table, address: number, type: ValueType): PointConfig {
  return { id, table, address, type, bit: 0, length: widthOf(type), wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0, writable: false, report: { mode: 'always', deadband: 0, deadbandKind: 'absolute', maxSilenceMs: 0 } };
}

export type Layout = 'meter' | 'registers';

/**
 * 50 points per device. `meter`: a typical energy-meter map, floats and longs in clusters with
 * small gaps plus two far-away points. `registers`: 16-bit values in two blocks with small gaps
 * (a PLC data block), the layout where merging gains the most.
 */
export function benchDevice(unitId: number, layout: Layout = 'meter'): DeviceConfig {
  const points: PointConfig[] = [];
  if (layout === 'meter') {
    for (let i = 0; i < 20; i += 1) points.push(point(`v${i}`, 'input', i * 2, 'float32'));
    for (let i = 0; i < 10; i += 1) points.push(point(`s${i}`, 'holding', 100 + i * 2, 'uint16'));
    for (let i = 0; i < 10; i += 1) points.push(point(`e${i}`, 'holding', 200 + i * 3, 'int32'));
    for (let i = 0; i < 8; i += 1) points.push(point(`q${i}`, 'input', 1000 + i, 'int16'));
    points.push(point('serial', 'holding', 5000, 'uint16'), point('status', 'input', 3000, 'uint16'));
  } else {
    for (let i = 0; i < 25; i += 1) points.push(point(`h${i}`, 'holding', i + Math.floor(i / 10), 'uint16'));
    for (let i = 0; i < 25; i += 1) points.push(point(`i${i}`, 'input', i + Math.floor(i / 10), 'int16'));
  }
  return {
    name: `unit-${unitId}`, bus: 'bench', unitId, pollIntervalMs: 1000, points, commands: [], streams: [],
    limits: { maxRegistersPerRead: 125, maxBitsPerRead: 2000, maxGap: 8, forceMultiWrite: false },
  };
}

function simMap(units: number[]): SimMap {
  const text = `units:\n${units.map((u) => `  ${u}:\n    size: { coil: 10, discrete: 10, holding: 6000, input: 4000 }\n    holding: { 100: 7 }\n`).join('')}`;
  const parsed = parseSimMap(text);
  if (!parsed.ok) throw new Error(parsed.problems.join('; '));
  return parsed.map;
}

async function drive(bus: Bus, work: Array<{ unit: number; requests: ReadRequest[] }>, windowMs: number): Promise<PollerResult> {
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

export async function measureSouthbound(line: LineCase, windowMs: number, deviceCount = 4, layout: Layout = 'meter'): Promise<SouthboundResult> {
  const units = Array.from({ length: deviceCount }, (_, i) => i + 1);
  const devices = units.map((u) => benchDevice(u, layout));
  const settings = { baud: line.baud, parity: line.parity, dataBits: 8, stopBits: 1 } as const;
  const timing = lineTiming(settings);
  const pty = await createPtyPair();
  const sim = await startSimulation({ map: simMap(units), logger: silentLogger(), rtu: { path: pty.b }, line: settings, baudAccurate: true });
  const config: RtuBusConfig = {
    kind: 'rtu', name: 'bench', path: pty.a, baudRate: line.baud, parity: line.parity, dataBits: 8, stopBits: 1, timeoutMs: 3000,
    interFrameDelayMs: defaultInterFrameDelayMs(line.baud, 8, line.parity, 1),
    reconnect: { initialMs: 100, maxMs: 1000, jitter: 0 }, cooldown: { afterTimeouts: 100, initialMs: 1000, maxMs: 1000 }, busyRetries: 0,
  };
  const bus = new Bus({ config, transportFactory: createModbusTransport, logger: silentLogger() });
  bus.start();
  try {
    const planned = devices.map((d) => ({ unit: d.unitId, requests: planReads(d.points, d.limits) }));
    const naive = devices.map((d) => ({ unit: d.unitId, requests: d.points.map((p) => ({ table: p.table, start: p.address, count: widthOf(p.type, p.length), points: [p] })) }));
    await drive(bus, planned.map((w) => ({ ...w, requests: w.requests.slice(0, 1) })), 1); // warm-up: port open
    const fieldgate = await drive(bus, planned, windowMs);
    const naiveResult = await drive(bus, naive, windowMs);
    const cycleMicros = planned.flatMap((w) => w.requests).reduce((sum, r) => sum + timing.transactionMicros(8, 5 + 2 * r.count), 0);
    const cycleUseful = planned.flatMap((w) => w.requests).reduce((sum, r) => sum + r.points.reduce((s, p) => s + widthOf(p.type, p.length), 0), 0);
    return {
      line: `${line.baud} 8${line.parity[0].toUpperCase()}1, ${layout} map`,
      formula: timing.describe(),
      limit125: (125 * 1e6) / timing.transactionMicros(8, 5 + 250),
      planLimit: (cycleUseful * 1e6) / cycleMicros,
      fieldgate,
      naive: naiveResult,
    };
  } finally {
    await bus.stop();
    await sim.close();
    await pty.close();
  }
}

const rate = (r: PollerResult, key: 'usefulRegisters' | 'wireRegisters') => r[key] / r.seconds;

export async function run(log: (line: string) => void, windowMs = 8_000): Promise<void> {
  log('## Southbound: registers/s on a baud-accurate RS-485 line (4 devices x 50 points, simulator over a socat pty)');
  log('');
  const rows: string[] = [];
  const cases = [
    [{ baud: 9600, parity: 'even' }, 'meter'], [{ baud: 9600, parity: 'even' }, 'registers'],
    [{ baud: 115200, parity: 'even' }, 'meter'], [{ baud: 115200, parity: 'even' }, 'registers'],
  ] as const;
  for (const [line, layout] of cases) {
    const r = await measureSouthbound(line, windowMs, 4, layout);
    if (layout === 'meter') log(`- ${r.formula}`);
    const fg = rate(r.fieldgate, 'usefulRegisters');
    const nv = rate(r.naive, 'usefulRegisters');
    rows.push(`| ${r.line} | ${r.limit125.toFixed(0)} | ${r.planLimit.toFixed(0)} | ${fg.toFixed(0)} (${rate(r.fieldgate, 'wireRegisters').toFixed(0)} on the wire) | ${((100 * fg) / r.planLimit).toFixed(1)} % | ${nv.toFixed(0)} | ${(fg / nv).toFixed(1)}x | ${r.fieldgate.requests}/${r.naive.requests}, ${r.fieldgate.errors + r.naive.errors} errors |`);
  }
  log('- limit for fieldgate\'s plan = useful registers of one cycle of planned requests / the sum of their transaction times (the line never idle)');
  log('');
  log('| line | limit, 125-register reads (reg/s) | limit for fieldgate\'s plan (useful reg/s) | fieldgate (useful reg/s) | fieldgate / plan limit (target >= 95 %) | naive one-per-point (reg/s) | fieldgate / naive (target >= 10x at 9600) | requests fg/naive |');
  log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const row of rows) log(row);
  log('');
}
