// Inbound benchmark: event-loop time one hostile cloud message costs before and while it reaches
// the bus (parse, key cap, validation, one log line, planned read-backs), with an in-memory device.
import { performance } from 'node:perf_hooks';
import { parseInbound } from '../../src/cloud/mqtt/topics.js';
import { CommandService, type DeviceIo } from '../../src/device/commands.js';
import type { DeviceConfig } from '../../src/core/config/site-types.js';
import { createLogger } from '../../src/ops/log.js';
import type { ReadBlock } from '../../src/core/points/codec.js';
import type { Table } from '../../src/core/points/types.js';
import { deviceConfig, pointConfig } from '../helpers/device-configs.js';
import { compileDevice } from '../../src/core/config/compile.js';

/** Answers every read with zeros and counts the requests. */
class CountingIo implements DeviceIo {
  reads = 0;
  async read(table: Table, start: number, count: number): Promise<ReadBlock> {
    this.reads += 1;
    return table === 'coil' || table === 'discrete' ? { table, start, bits: Array<boolean>(count).fill(false) } : { table, start, words: new Uint16Array(count) };
  }
  async write(): Promise<void> {}
  async sleep(): Promise<void> {}
}

interface Case {
  name: string;
  topic: string;
  payload: Buffer;
  maxKeys: number;
}

const device: DeviceConfig = deviceConfig({
  name: 'plant',
  points: Array.from({ length: 40 }, (_, i) => pointConfig({ id: `p${i}`, address: i, writable: true, max: 100 })),
});

function cases(): Case[] {
  const ghosts = JSON.stringify(Object.fromEntries(Array.from({ length: 24_000 }, (_, i) => [`ghost_${i}`, i])));
  const read = (n: number) => JSON.stringify({ method: 'read', params: { keys: Array(n).fill('p7') }, id: 1 });
  return [
    { name: 'push of 24,000 unknown keys, key cap raised', topic: 'attributes/push', payload: Buffer.from(ghosts), maxKeys: 100_000 },
    { name: 'push of 24,000 unknown keys, default key cap', topic: 'attributes/push', payload: Buffer.from(ghosts), maxKeys: 1000 },
    { name: 'push of 40 setpoints above max', topic: 'attributes/push', payload: Buffer.from(JSON.stringify(Object.fromEntries(device.points.map((p) => [p.id, 999])))), maxKeys: 1000 },
    { name: 'read of one key listed 2,000 times', topic: 'command/send/1', payload: Buffer.from(read(2000)), maxKeys: 100_000 },
  ];
}

export interface InboundRow {
  name: string;
  payloadKiB: number;
  medianMs: number;
  logLines: number;
  busRequests: number;
}

/** Handles each case `rounds` times; the counts are those of the last round. */
export async function measureInbound(rounds: number): Promise<InboundRow[]> {
  const lines: string[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (l: string) => { lines.push(l); return true; } } as unknown as NodeJS.WritableStream });
  const rows: InboundRow[] = [];
  for (const c of cases()) {
    const times: number[] = [];
    let logLines = 0;
    let busRequests = 0;
    for (let i = 0; i < rounds; i += 1) {
      const io = new CountingIo();
      const svc = new CommandService(compileDevice(device), [], io, logger);
      lines.length = 0;
      const started = performance.now();
      const inbound = parseInbound(c.topic, c.payload, { streams: [], maxPayloadBytes: 16 << 20, maxKeys: c.maxKeys });
      if (inbound.kind === 'attributes-push') await svc.applyAttributes(inbound.attributes, 'push');
      else if (inbound.kind === 'command') await svc.runCommand(inbound.method, inbound.params);
      else if (inbound.kind === 'invalid') logger.warn({ reason: inbound.reason }, 'invalid inbound message');
      times.push(performance.now() - started);
      logLines = lines.length;
      busRequests = io.reads;
    }
    times.sort((a, b) => a - b);
    rows.push({ name: c.name, payloadKiB: c.payload.length / 1024, medianMs: times[Math.floor(times.length / 2)] ?? 0, logLines, busRequests });
  }
  return rows;
}

export async function run(log: (line: string) => void): Promise<void> {
  log('## inbound: cost of one hostile cloud message (in-memory device, 40 points)\n');
  log('| message | payload KiB | ms (median of 20) | log lines | bus requests |');
  log('| --- | --- | --- | --- | --- |');
  for (const r of await measureInbound(20)) {
    log(`| ${r.name} | ${r.payloadKiB.toFixed(0)} | ${r.medianMs.toFixed(1)} | ${r.logLines} | ${r.busRequests} |`);
  }
  log('');
}
