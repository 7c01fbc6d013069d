// Store and forward across faults, counted: the broker stopped and restarted mid-stream, and the
// gateway killed with SIGKILL mid-stream. The device reports a counter on every poll.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import mqtt from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { parseSimMap, startSimulation, type Simulation } from '../../src/simulator/index.js';
import { Mosquitto } from '../helpers/mosquitto.js';
import { waitFor } from './harness.js';

const MAP = `
units:
  1:
    size: { holding: 100 }
    dynamic:
      - { table: holding, address: 5, type: uint32, counter: { perSecond: 20 } }
`;

interface Rig {
  broker: Mosquitto;
  sim: Simulation;
  dir: string;
  site: string;
  received: number[];
  subscriber: mqtt.MqttClient;
}

async function startRig(): Promise<Rig> {
  const broker = await Mosquitto.start({ persistence: true });
  const map = parseSimMap(MAP);
  if (!map.ok) throw new Error(map.problems.join('; '));
  const sim = await startSimulation({ map: map.map, logger: silentLogger(), tcp: { host: '127.0.0.1', port: 0 } });
  const dir = mkdtempSync(join(tmpdir(), 'fg-delivery-'));
  const site = join(dir, 'site.yaml');
  writeFileSync(site, `
gateway:
  stateDir: ${join(dir, 'state')}
  logLevel: warn
  health: { enabled: false }
  cloud:
    mqttUrl: ${broker.url}
    projectKey: pk
    reconnect: { initialMs: 100, maxMs: 500, jitter: 0.1 }
    outbox: { maxBytes: 16777216, commitIntervalMs: 20 }
buses:
  - { name: plant, kind: tcp, host: 127.0.0.1, port: ${sim.tcp?.port}, timeoutMs: 500 }
devices:
  - name: counter
    bus: plant
    unitId: 1
    pollIntervalMs: 100ms
    cloud: { accessToken: counter-token }
    points:
      - { id: seq, table: holding, address: 5, type: uint32, report: { mode: always } }
`);
  const received: number[] = [];
  // A persistent QoS 1 session: the broker keeps what arrives while the subscriber is away.
  const subscriber = await mqtt.connectAsync(broker.url, { clientId: 'delivery-counter', clean: false, reconnectPeriod: 200 });
  subscriber.on('message', (_topic, payload: Buffer) => {
    const body = JSON.parse(payload.toString()) as { seq?: number };
    if (typeof body.seq === 'number') received.push(body.seq);
  });
  await subscriber.subscribeAsync('attributes', { qos: 1 });
  return { broker, sim, dir, site, received, subscriber };
}

function startGatewayProcess(site: string): { child: ChildProcess; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/system/fixtures/cli.ts', 'run', '--config', site], { stdio: ['ignore', 'ignore', 'inherit'], env: { PATH: process.env.PATH } });
  return { child, exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))) };
}

/** Values in arrival order with redeliveries removed: must never go backwards. */
function distinctInOrder(values: number[]): number[] {
  const out: number[] = [];
  for (const v of values) if (out.length === 0 || v > out[out.length - 1]) out.push(v);
  return out;
}

function outboxSeqValues(dir: string): number[] {
  const db = new Database(join(dir, 'state', 'outbox.sqlite'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT payload FROM outbox ORDER BY seq').all() as Array<{ payload: Buffer }>;
    return rows.map((r) => (JSON.parse(r.payload.toString()) as { seq?: number }).seq).filter((v): v is number => typeof v === 'number');
  } finally {
    db.close();
  }
}

describe('delivery across faults', () => {
  let rig: Rig | undefined;
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const c of children) c.kill('SIGKILL');
    await rig?.subscriber.endAsync();
    await rig?.sim.close();
    await rig?.broker.stop();
    if (rig) rmSync(rig.dir, { recursive: true, force: true });
  });

  it('broker stopped and restarted mid-stream: every report arrives, in order, none lost', async () => {
    rig = await startRig();
    const r = rig;
    const gw = startGatewayProcess(r.site);
    children.push(gw.child);
    await waitFor(() => (r.received.length >= 10 ? true : undefined), 30_000);
    await r.broker.stop();
    await new Promise((res) => setTimeout(res, 2000));
    await r.broker.restart();
    const sim = r.sim.simulator;
    const after = sim.getRegister(1, 'holding', 6) + 40;
    await waitFor(() => (r.received.some((v) => v >= after) ? true : undefined), 30_000);
    const values = distinctInOrder(r.received);
    const holes = values.slice(1).map((v, i) => v - values[i]).filter((step) => step > 8);
    console.log(`broker restart: ${r.received.length} delivered, ${r.received.length - values.length} redelivered, largest step ${Math.max(...values.slice(1).map((v, i) => v - values[i]))}`);
    // 20 counts/s polled every 100 ms: ~2 per report. A lost outage window would be a step of ~40.
    expect(holes).toEqual([]);
    expect(values.length).toBeGreaterThan(40);
  }, 90_000);

  it('gateway killed with SIGKILL mid-stream: every committed report arrives after the restart, in order', async () => {
    rig = await startRig();
    const r = rig;
    const first = startGatewayProcess(r.site);
    children.push(first.child);
    await waitFor(() => (r.received.length >= 10 ? true : undefined), 30_000);
    // Keep the broker away so a backlog builds, then kill the gateway without warning.
    await r.broker.stop();
    await new Promise((res) => setTimeout(res, 1500));
    first.child.kill('SIGKILL');
    await first.exited;
    const backlog = outboxSeqValues(r.dir);
    await r.broker.restart();
    const second = startGatewayProcess(r.site);
    children.push(second.child);
    const lastBacklog = backlog.at(-1) ?? 0;
    await waitFor(() => (r.received.some((v) => v > lastBacklog + 20) ? true : undefined), 30_000);
    const delivered = new Set(r.received);
    const missing = backlog.filter((v) => !delivered.has(v));
    const values = distinctInOrder(r.received);
    console.log(`kill -9: ${backlog.length} reports in the outbox at the kill, ${missing.length} missing after restart, ${r.received.length} delivered in all`);
    expect(backlog.length).toBeGreaterThan(5);
    expect(missing).toEqual([]);
    // Order: the backlog's first arrivals come in the order they were appended.
    const inBacklog = new Set(backlog);
    const firstArrivals = [...new Set(r.received.filter((v) => inBacklog.has(v)))];
    expect(firstArrivals).toEqual([...new Set(backlog)]);
    expect(values.at(-1)).toBeGreaterThan(lastBacklog);
    await second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 90_000);
});
