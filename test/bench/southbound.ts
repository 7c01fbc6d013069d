// Southbound benchmark: registers/s on a baud-accurate simulated RS-485 line, fieldgate's planned
// reads vs the theoretical line limit and vs a naive one-request-per-point poller, same run.
// The master (bus + pollers) runs in a child process, so its CPU is measured alone, and runs once
// from this checkout and once from the baseline commit (BENCH_BASELINE, default main) on the same
// simulated line: the baseline's figures are printed beside this commit's. The simulator counts
// requests that begin less than t3.5 after the previous frame; it ignores them (strict mode) for
// this commit, and only counts them for the baseline.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { silentLogger } from '../../src/ops/log.js';
import { planReads } from '../../src/core/modbus/plan.js';
import { widthOf } from '../../src/core/points/types.js';
import { createPtyPair, lineTiming, parseSimMap, startSimulation, type SimMap } from '../../packages/simulator/src/index.js';
import { baselineTree } from './baseline-tree.js';
import { benchNodeFlags } from './northbound.js';
import type { MasterResult, MasterRun } from './southbound-master.js';
import { benchDevice, type Layout, type PollerResult } from './southbound-device.js';

export { benchDevice, type Layout, type PollerResult } from './southbound-device.js';

export interface LineCase {
  baud: number;
  parity: 'none' | 'even' | 'odd';
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
  /** CPU seconds of the master per 1,000 useful registers of the planned reads. */
  cpuPer1000: number;
  /** Requests that began less than t3.5 after the previous frame (both pollers of the run). */
  earlyRequests: number;
}

export interface MeasureOptions {
  /** Source tree of the master (default this checkout). */
  root?: string;
  /** Simulator ignores early requests (default true). */
  strict?: boolean;
}

const HERE = fileURLToPath(new URL('.', import.meta.url));
const THIS_ROOT = fileURLToPath(new URL('../../', import.meta.url));

function simMap(units: number[]): SimMap {
  const text = `units:\n${units.map((u) => `  ${u}:\n    size: { coil: 10, discrete: 10, holding: 6000, input: 4000 }\n    holding: { 100: 7 }\n`).join('')}`;
  const parsed = parseSimMap(text);
  if (!parsed.ok) throw new Error(parsed.problems.join('; '));
  return parsed.map;
}

/** Runs southbound-master.ts in a child process (tsx from `root`'s node_modules). */
function runMaster(run: MasterRun): Promise<MasterResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...benchNodeFlags(), '--conditions=fieldgate-source', '--import', 'tsx',
      `${HERE}southbound-master.ts`, JSON.stringify(run)], { cwd: run.root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString(); });
    child.on('error', reject);
    child.on('close', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || !line.startsWith('{')) reject(new Error(`bench master exited ${code}: ${err.slice(-2000)}`));
      else resolve(JSON.parse(line) as MasterResult);
    });
  });
}

export async function measureSouthbound(line: LineCase, windowMs: number, deviceCount = 4, layout: Layout = 'meter',
  options: MeasureOptions = {}): Promise<SouthboundResult> {
  const units = Array.from({ length: deviceCount }, (_, i) => i + 1);
  const devices = units.map((u) => benchDevice(u, layout));
  const settings = { baud: line.baud, parity: line.parity, dataBits: 8, stopBits: 1 } as const;
  const timing = lineTiming(settings);
  const pty = await createPtyPair();
  const sim = await startSimulation({
    map: simMap(units), logger: silentLogger(), rtu: { path: pty.b }, line: settings, baudAccurate: true, strict: options.strict ?? true,
  });
  try {
    const result = await runMaster({
      root: options.root ?? THIS_ROOT, path: pty.a, baud: line.baud, parity: line.parity, layout, deviceCount, windowMs,
      warmupMs: Math.min(2000, windowMs / 4),
    });
    const planned = devices.flatMap((d) => planReads(d.points, d.limits));
    const cycleMicros = planned.reduce((sum, r) => sum + timing.transactionMicros(8, 5 + 2 * r.count), 0);
    const cycleUseful = planned.reduce((sum, r) => sum + r.points.reduce((s, p) => s + widthOf(p.type, p.length), 0), 0);
    return {
      line: `${line.baud} 8${line.parity[0].toUpperCase()}1, ${layout} map`,
      formula: timing.describe(),
      limit125: (125 * 1e6) / timing.transactionMicros(8, 5 + 250),
      planLimit: (cycleUseful * 1e6) / cycleMicros,
      fieldgate: result.fieldgate,
      naive: result.naive,
      cpuPer1000: result.fieldgate.usefulRegisters > 0 ? (result.fieldgateCpuMicros / 1e6) / (result.fieldgate.usefulRegisters / 1000) : NaN,
      earlyRequests: sim.simulator.line.earlyRequests,
    };
  } finally {
    await sim.close();
    await pty.close();
  }
}

const rate = (r: PollerResult, key: 'usefulRegisters' | 'wireRegisters') => r[key] / r.seconds;
const percent = (r: SouthboundResult) => (100 * rate(r.fieldgate, 'usefulRegisters')) / r.planLimit;

export const SOUTHBOUND_CASES: ReadonlyArray<readonly [LineCase, Layout]> = [9600, 19200, 38400, 115200]
  .flatMap((baud) => (['meter', 'registers'] as const).map((layout) => [{ baud, parity: 'even' }, layout] as const));

export async function run(log: (line: string) => void, windowMs = 8_000): Promise<void> {
  const baseline = await baselineTree(process.env.BENCH_BASELINE ?? 'main', THIS_ROOT);
  log('## Southbound: registers/s on a baud-accurate RS-485 line (4 devices x 50 points, simulator over a socat pty)');
  log('');
  log(`- baseline: ${baseline.ref} (${baseline.commit.slice(0, 10)}), measured in the same run on the same simulated line (not strict, early requests only counted)`);
  const rows: string[] = [];
  const baseRows: string[] = [];
  for (const [line, layout] of SOUTHBOUND_CASES) {
    const r = await measureSouthbound(line, windowMs, 4, layout);
    const b = await measureSouthbound(line, windowMs, 4, layout, { root: baseline.root, strict: false });
    if (layout === 'meter') log(`- ${r.formula}`);
    const fg = rate(r.fieldgate, 'usefulRegisters');
    const nv = rate(r.naive, 'usefulRegisters');
    rows.push(`| ${r.line} | ${r.limit125.toFixed(0)} | ${r.planLimit.toFixed(0)} | ${fg.toFixed(0)} (${rate(r.fieldgate, 'wireRegisters').toFixed(0)} on the wire) | ${percent(r).toFixed(1)} % | ${nv.toFixed(0)} | ${(fg / nv).toFixed(1)}x | ${r.fieldgate.requests}/${r.naive.requests}, ${r.fieldgate.errors + r.naive.errors} errors | ${r.earlyRequests} |`);
    baseRows.push(`| ${r.line} | ${percent(r).toFixed(1)} % | ${percent(b).toFixed(1)} % | ${r.earlyRequests} | ${b.earlyRequests} of ${b.fieldgate.requests + b.naive.requests} | ${r.cpuPer1000.toFixed(3)} | ${b.cpuPer1000.toFixed(3)} | ${((100 * (r.cpuPer1000 - b.cpuPer1000)) / b.cpuPer1000).toFixed(0)} % |`);
  }
  log('- limit for fieldgate\'s plan = useful registers of one cycle of planned requests / the sum of their transaction times (the line never idle)');
  log('- requests before t3.5: requests that began less than t3.5 after the previous frame on the simulated line (strict: ignored; target 0)');
  log('');
  log('| line | limit, 125-register reads (reg/s) | limit for fieldgate\'s plan (useful reg/s) | fieldgate (useful reg/s) | fieldgate / plan limit (target >= 95 %) | naive one-per-point (reg/s) | fieldgate / naive (target >= 10x at 9600) | requests fg/naive | requests before t3.5 (strict) |');
  log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const row of rows) log(row);
  log('');
  log(`| line | fieldgate / plan limit | baseline / plan limit | requests before t3.5 | baseline: requests before t3.5 | CPU s per 1,000 useful registers | baseline CPU s per 1,000 | CPU change |`);
  log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const row of baseRows) log(row);
  log('');
}
