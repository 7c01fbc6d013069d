// Store-and-forward rig for the fault tests: mosquitto (persistent, restartable), a simulated
// counter device, the gateway as a child process (real CLI, site file) and a persistent QoS 1
// subscriber on `attributes`. A sampler watches the gateway's outbox file, so the tests know
// every report the gateway committed, not just the ones that arrived.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'libsql';
import mqtt from 'mqtt';
import { silentLogger } from '../../src/ops/log.js';
import { parseSimMap, startSimulation, type Simulation } from '../../packages/simulator/src/index.js';
import { Mosquitto } from '../helpers/mosquitto.js';
import { TSX_FROM_SOURCE } from '../helpers/child.js';

// 100 counts/s read every 50 ms: each report carries a value ~5 above the previous one.
const MAP = `
units:
  1:
    size: { holding: 100 }
    dynamic:
      - { table: holding, address: 5, type: uint32, counter: { perSecond: 100 } }
`;

export interface RigOptions {
  /** Outbox mode and crash window (the site's defaults when absent). */
  mode?: 'memory-first' | 'write-ahead';
  durableAfterMs?: number;
  /** The state directory (a small filesystem in the storage tests); `<rig dir>/state` by default. */
  stateDir?: string;
  /** Serve /healthz, /status and /metrics on this port (off by default). */
  healthPort?: number;
  /** Outbox byte cap (16 MiB by default). */
  maxBytes?: number;
  logLevel?: string;
  /** More settings of `cloud.outbox`, as YAML flow entries (e.g. `condemnAfterMs: 2000`). */
  outboxExtra?: string;
  /** The bus's share on this port, answering from memory for `cacheMs` (no share by default). */
  share?: { port: number; cacheMs: number };
}

function siteFile(stateDir: string, brokerUrl: string, simPort: number, options: RigOptions): string {
  const extra = [options.mode ? `mode: ${options.mode}` : '', options.durableAfterMs !== undefined ? `durableAfterMs: ${options.durableAfterMs}` : '', options.outboxExtra ?? ''].filter(Boolean).join(', ');
  const health = options.healthPort === undefined ? '{ enabled: false }' : `{ enabled: true, port: ${options.healthPort} }`;
  return `
gateway:
  stateDir: ${stateDir}
  logLevel: ${options.logLevel ?? 'warn'}
  health: ${health}
  cloud:
    mqttUrl: ${brokerUrl}
    projectKey: pk
    reconnect: { initialMs: 100, maxMs: 500, jitter: 0.1 }
    outbox: { maxBytes: ${options.maxBytes ?? 16777216}, commitIntervalMs: 20${extra ? `, ${extra}` : ''} }
buses:
  - { name: plant, kind: tcp, host: 127.0.0.1, port: ${simPort}, timeoutMs: 500${options.share ? `, share: { port: ${options.share.port}, cacheMs: ${options.share.cacheMs} }` : ''} }
devices:
  - name: counter
    bus: plant
    unitId: 1
    pollIntervalMs: 50ms
    cloud: { accessToken: counter-token, timestampAttribute: ts }
    points:
      - { id: seq, table: holding, address: 5, type: uint32, report: { mode: always } }
`;
}

/** Per connection: a function that sees the client's bytes, and may close the connection by throwing. */
export type ClientTap = () => (chunk: Buffer) => void;

/**
 * TCP pipe between the gateway and the broker. Holding the broker's direction keeps PUBACKs from
 * the gateway while its publishes still reach the broker: reports delivered but not yet acked.
 */
/**
 * Cuts a byte stream into MQTT control packets (fixed header, remaining length, body); `keep`
 * decides per packet type (the high nibble of the first byte) whether it passes.
 */
export class MqttPacketFilter {
  private buffered: Buffer = Buffer.alloc(0);

  constructor(private readonly keep: (type: number) => boolean) {}

  /** The bytes of the whole packets in `chunk` (and earlier partial ones) that pass. */
  push(chunk: Buffer): Buffer {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const out: Buffer[] = [];
    let offset = 0;
    for (;;) {
      const size = packetSize(this.buffered, offset);
      if (size === undefined || offset + size > this.buffered.length) break;
      if (this.keep(this.buffered[offset] >> 4)) out.push(this.buffered.subarray(offset, offset + size));
      offset += size;
    }
    this.buffered = this.buffered.subarray(offset);
    return Buffer.concat(out);
  }
}

/** Length of the packet at `offset` (header included), or undefined while its header is incomplete. */
function packetSize(buffer: Buffer, offset: number): number | undefined {
  let length = 0;
  for (let i = 1; i <= 4; i += 1) {
    if (offset + i >= buffer.length) return undefined;
    const byte = buffer[offset + i];
    length += (byte & 0x7f) * 128 ** (i - 1);
    if ((byte & 0x80) === 0) return 1 + i + length;
  }
  throw new Error('malformed MQTT remaining length');
}

const PUBACK = 4;

export class BrokerPipe {
  private holding = false;
  private droppingPubacks = false;
  private cut = false;
  private readonly held: Array<{ to: Socket; chunk: Buffer }> = [];
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server, readonly port: number, private readonly tap: ClientTap | undefined) {}

  /** `tap`, when given, is made per connection and sees every byte a client sends. */
  static async start(brokerPort: number, tap?: ClientTap): Promise<BrokerPipe> {
    let pipe: BrokerPipe | undefined;
    const server = createServer((client) => pipe?.join(client, brokerPort));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    pipe = new BrokerPipe(server, (server.address() as { port: number }).port, tap);
    return pipe;
  }

  get url(): string {
    return `mqtt://127.0.0.1:${this.port}`;
  }

  /** The channel gone: every connection dropped and new ones closed at once until `cutOff(false)`. */
  cutOff(on: boolean): void {
    this.cut = on;
    if (on) for (const s of this.sockets) s.destroy();
  }

  /** The broker's PUBACKs dropped (everything else, PINGRESP included, passes): a link that stays up and acknowledges nothing. */
  dropPubacks(on: boolean): void {
    this.droppingPubacks = on;
  }

  holdBrokerReplies(on: boolean): void {
    this.holding = on;
    if (!on) for (const { to, chunk } of this.held.splice(0)) if (!to.destroyed) to.write(chunk);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private join(client: Socket, brokerPort: number): void {
    if (this.cut) {
      client.destroy();
      return;
    }
    const broker = connect(brokerPort, '127.0.0.1');
    for (const s of [client, broker]) {
      this.sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        this.sockets.delete(s);
        client.destroy();
        broker.destroy();
      });
    }
    const seen = this.tap?.();
    client.on('data', (chunk: Buffer) => {
      try {
        seen?.(chunk);
      } catch {
        client.destroy();
        return;
      }
      broker.write(chunk);
    });
    const framer = new MqttPacketFilter((type) => !(type === PUBACK && this.droppingPubacks));
    broker.on('data', (raw: Buffer) => {
      const chunk = framer.push(raw);
      if (chunk.length === 0) return;
      if (this.holding) this.held.push({ to: client, chunk });
      else client.write(chunk);
    });
  }
}

export interface GatewayProcess {
  child: ChildProcess;
  exited: Promise<number | null>;
}

/** Every counter value ever seen in committed outbox rows, in commit order. */
export class OutboxSampler {
  readonly seen: number[] = [];
  /** Poll time of the newest committed row seen (Unix ms). */
  lastTs = 0;
  /** Poll times of committed `online: false` reports. */
  readonly offlineTs: number[] = [];
  /** Per device: counter values in commit order, and the poll time of its newest committed row. */
  readonly seenBy = new Map<string, number[]>();
  readonly lastTsBy = new Map<string, number>();
  private readonly seenSet = new Set<number>();
  private lastSeq = 0;
  private db: Database.Database | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly path: string) {}

  start(periodMs = 20): void {
    this.timer = setInterval(() => this.sample(), periodMs);
  }

  /** Rows committed and not yet acknowledged, right now. */
  pending(): number[] {
    return this.read(0).map((r) => r.value);
  }

  /** One device's rows committed and not yet acknowledged, right now. */
  pendingOf(device: string): number[] {
    return this.read(0).filter((r) => r.device === device).map((r) => r.value);
  }

  /** Poll times of the counter rows committed and not yet deleted, right now. */
  pendingTs(): number[] {
    return this.read(0).map((r) => r.ts);
  }

  /** Rows committed and not yet acknowledged, with or without a counter value. */
  pendingRows(): number {
    const row = this.open()?.prepare('SELECT COUNT(*) AS n FROM outbox').get() as { n: number } | undefined;
    return row?.n ?? 0;
  }

  /** Rows ever committed (AUTOINCREMENT keeps the highest sequence number). */
  committed(): number {
    const db = this.open();
    const row = db?.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'outbox'").get() as { seq: number } | undefined;
    return row?.seq ?? 0;
  }

  sample(): void {
    for (const row of this.read(this.lastSeq)) {
      this.lastSeq = row.seq;
      this.lastTs = Math.max(this.lastTs, row.ts);
      this.lastTsBy.set(row.device, Math.max(this.lastTsBy.get(row.device) ?? 0, row.ts));
      const ofDevice = this.seenBy.get(row.device) ?? [];
      if (!ofDevice.includes(row.value)) this.seenBy.set(row.device, [...ofDevice, row.value]);
      if (!this.seenSet.has(row.value)) {
        this.seenSet.add(row.value);
        this.seen.push(row.value);
      }
    }
  }

  stop(): void {
    clearInterval(this.timer);
    this.db?.close();
    this.db = undefined;
  }

  private open(): Database.Database | undefined {
    if (this.db === undefined && existsSync(this.path)) {
      // libsql ignores the readonly/fileMustExist options; a read-only URI gives both.
      this.db = new Database(`file:${this.path}?mode=ro`);
    }
    return this.db;
  }

  private read(afterSeq: number): Array<{ seq: number; device: string; value: number; ts: number }> {
    try {
      const db = this.open();
      if (!db) return [];
      const rows = db.prepare('SELECT seq, device, ts, payload FROM outbox WHERE seq > ? ORDER BY seq').all(afterSeq) as Array<{ seq: number; device: string; ts: number; payload: ArrayBuffer }>;
      const out: Array<{ seq: number; device: string; value: number; ts: number }> = [];
      for (const r of rows) {
        const body = JSON.parse(Buffer.from(r.payload).toString()) as { seq?: unknown; online?: unknown };
        if (typeof body.seq === 'number') out.push({ seq: r.seq, device: r.device, value: body.seq, ts: r.ts });
        if (body.online === false && r.seq > this.lastSeq && !this.offlineTs.includes(r.ts)) this.offlineTs.push(r.ts);
      }
      return out;
    } catch {
      // The writer may be mid-recovery after a SIGKILL: reopen on the next sample.
      this.db?.close();
      this.db = undefined;
      return [];
    }
  }
}

export class DeliveryRig {
  /** Counter values in arrival order, redeliveries included. */
  readonly received: number[] = [];
  /** Poll times (the `ts` attribute) of the `online: false` reports that arrived. */
  readonly offlineTs: number[] = [];
  /** Poll times of the counter reports that arrived, redeliveries included (one per poll cycle). */
  readonly receivedTs: number[] = [];
  /** Every message on `attributes`, with or without a counter value. */
  messages = 0;
  /** Each message that carried a poll time, in arrival order: what it was (`online: true|false` or `seq`) and its `ts`. */
  readonly stamped: Array<{ what: string; ts: number }> = [];
  private readonly children: ChildProcess[] = [];

  private constructor(
    readonly broker: Mosquitto,
    readonly sim: Simulation,
    readonly dir: string,
    readonly site: string,
    readonly subscriber: mqtt.MqttClient,
    readonly outbox: OutboxSampler,
    readonly pipe: BrokerPipe,
  ) {
    subscriber.on('message', (_topic, payload: Buffer) => {
      this.messages += 1;
      const body = JSON.parse(payload.toString()) as { seq?: unknown; online?: unknown; ts?: unknown };
      if (typeof body.seq === 'number') this.received.push(body.seq);
      if (typeof body.seq === 'number' && typeof body.ts === 'number') this.receivedTs.push(body.ts);
      if (body.online === false && typeof body.ts === 'number') this.offlineTs.push(body.ts);
      if (typeof body.ts === 'number') this.stamped.push({ what: typeof body.seq === 'number' ? 'seq' : `online: ${String(body.online)}`, ts: body.ts });
    });
  }

  static async start(options: RigOptions = {}): Promise<DeliveryRig> {
    const broker = await Mosquitto.start({ persistence: true });
    const map = parseSimMap(MAP);
    if (!map.ok) throw new Error(map.problems.join('; '));
    const sim = await startSimulation({ map: map.map, logger: silentLogger(), tcp: { host: '127.0.0.1', port: 0 } });
    const dir = mkdtempSync(join(tmpdir(), 'fg-faults-'));
    const site = join(dir, 'site.yaml');
    const pipe = await BrokerPipe.start(broker.port);
    const stateDir = options.stateDir ?? join(dir, 'state');
    writeFileSync(site, siteFile(stateDir, pipe.url, sim.tcp?.port ?? 0, options));
    // A persistent QoS 1 session: the broker keeps what arrives while the subscriber is away.
    const subscriber = await mqtt.connectAsync(broker.url, { clientId: 'fault-counter', clean: false, reconnectPeriod: 200 });
    await subscriber.subscribeAsync('attributes', { qos: 1 });
    const outbox = new OutboxSampler(join(stateDir, 'outbox.sqlite'));
    outbox.start();
    return new DeliveryRig(broker, sim, dir, site, subscriber, outbox, pipe);
  }

  /** `fieldgate run --config site.yaml` from source, as a daemon would run it; `logTo` keeps its stdout (the JSON log) and stderr. */
  startGateway(logTo?: { out: number; err: number }, env: Record<string, string> = {}): GatewayProcess {
    const child = spawn(process.execPath, [...TSX_FROM_SOURCE, 'test/system/fixtures/cli.ts', 'run', '--config', this.site], {
      stdio: ['ignore', logTo?.out ?? 'ignore', logTo?.err ?? 'inherit'], env: { PATH: process.env.PATH, ...env },
    });
    this.children.push(child);
    return { child, exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
  }

  /**
   * Stop the gateway with SIGTERM and wait until the broker has passed on everything it acked:
   * every committed row not left in the outbox was PUBACKed, so it must have reached the subscriber.
   */
  async stopAndCount(gateway: GatewayProcess): Promise<{ committed: number; leftInOutbox: number; acked: number; messages: number; exitCode: number | null }> {
    gateway.child.kill('SIGTERM');
    const exitCode = await gateway.exited;
    const committed = this.outbox.committed();
    const leftInOutbox = this.outbox.pendingRows();
    const acked = committed - leftInOutbox;
    await settle(() => this.messages >= acked, 15_000);
    return { committed, leftInOutbox, acked, messages: this.messages, exitCode };
  }

  /** Committed values that never arrived. */
  missing(values: readonly number[] = this.outbox.seen): number[] {
    const got = new Set(this.received);
    return values.filter((v) => !got.has(v));
  }

  async close(): Promise<void> {
    await killChildren(this.children);
    this.outbox.stop();
    await this.pipe.close();
    await this.subscriber.endAsync(true);
    await this.sim.close();
    await this.broker.dispose();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** SIGKILL every child still running and wait for each to exit. */
export async function killChildren(children: readonly ChildProcess[]): Promise<void> {
  const running = children.filter((c) => c.exitCode === null && c.signalCode === null);
  await Promise.all(running.map((c) => new Promise((resolve) => {
    c.once('exit', resolve);
    c.kill('SIGKILL');
  })));
}

/** Values in order of first arrival: redeliveries removed, nothing else. */
export function firstArrivals(values: readonly number[]): number[] {
  return [...new Set(values)];
}

/** Places where a value arrived for the first time after a larger one. */
export function outOfOrder(values: readonly number[]): Array<[number, number]> {
  const firsts = firstArrivals(values);
  return firsts.slice(1).flatMap((v, i) => (v > firsts[i] ? [] : [[firsts[i], v] as [number, number]]));
}

/** Polls until the condition holds or the time is up; the caller asserts, for a useful message. */
export async function settle(condition: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!condition() && Date.now() < end) await sleep(50);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
