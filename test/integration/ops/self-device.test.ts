// fieldgate's own device end to end on loopback: commands published to a real broker (mosquitto)
// reach the own identity's MQTT link, `read` and `poll` are taken on a real bus against pymodbus
// (an independent Modbus TCP peer), and the replies and own attributes come back through the broker.
import { connectAsync, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MqttLink } from '../../../src/cloud/mqtt/link.js';
import type { Sample } from '../../../src/device/poller.js';
import { createSouthbound } from '../../../src/main.js';
import { createLogger } from '../../../src/ops/log.js';
import { checkConfig } from '../../../src/ops/site-file.js';
import { createSelfDevice } from '../../../src/ops/self/wiring.js';
import { systemTime } from '../../../src/core/time.js';
import type { SelfDevice } from '../../../src/ops/self/self-device.js';
import { Mosquitto, freePort } from '../../helpers/mosquitto.js';
import { startPymodbus, type PymodbusSlave } from '../../helpers/pymodbus.js';
import { waitFor } from '../../helpers/wait.js';

let broker: Mosquitto;
let slave: PymodbusSlave;
let cloud: MqttClient;
let link: MqttLink;
let self: SelfDevice;
let stopSouthbound: () => Promise<void>;
let busTransactions: () => number;
const samples: Sample[] = [];
const replies = new Map<string, Record<string, unknown>>();
const reports: Array<Record<string, unknown>> = [];
let nextId = 100;

beforeAll(async () => {
  broker = await Mosquitto.start();
  slave = await startPymodbus({ tcp: await freePort() }, { units: [1] });
  const checked = checkConfig({
    gateway: { cloud: { mqttUrl: broker.url, projectKey: 'pk', identity: { accessToken: 'fieldgate-token', minReportGapMs: 1000, reportIntervalMs: 5000 } } },
    buses: [{ name: 'plc', kind: 'tcp', host: '127.0.0.1', port: slave.port, timeoutMs: 500 }],
    devices: [{
      name: 'meter', bus: 'plc', unitId: 1, pollIntervalMs: 60_000,
      points: [{ id: 'h0', table: 'holding', address: 0 }, { id: 'i2', table: 'input', address: 2 }],
    }],
  }, {});
  expect(checked.issues).toEqual([]);
  const config = checked.config!;
  const logger = createLogger({ level: 'silent' });
  const southbound = createSouthbound(config.site, config.compiled, { onSample: (s) => samples.push(s), onDeviceState: () => {} }, logger);
  southbound.start();
  stopSouthbound = () => southbound.stop();
  busTransactions = () => southbound.buses.get('plc')!.stats().transactions;
  link = new MqttLink({
    name: '@fieldgate', url: broker.url, streams: [], keepaliveS: 30, connectTimeoutMs: 5000,
    reconnect: { initialMs: 100, maxMs: 1000, jitter: 0 }, log: logger,
    credentials: () => Promise.resolve({ clientId: 'fieldgate', username: 'fieldgate-token', password: 'pk' }),
  });
  const status = () => ({
    version: 'test', startedAt: new Date(0).toISOString(), uptimeS: 10,
    buses: [{ name: 'plc', kind: 'tcp', up: true, transactions: 0, timeouts: 0, exceptions: 0, queueDepth: 0, utilisation: 0 }],
    devices: [{ name: 'meter', bus: 'plc', online: true, points: 2, lastPollAgeMs: 0, skippedCycles: 0 }],
    links: [], outbox: null, rateQueue: null,
  });
  self = createSelfDevice(link, config, { ...southbound, status }, logger, systemTime);
  cloud = await connectAsync(broker.url, { clientId: 'cloud-side', protocolVersion: 4 });
  await cloud.subscribeAsync(['command/reply/+', 'attributes'], { qos: 1 });
  cloud.on('message', (topic, payload) => {
    const body = JSON.parse(payload.toString()) as Record<string, unknown>;
    if (topic === 'attributes') reports.push(body);
    else replies.set(topic.slice('command/reply/'.length), body);
  });
  link.start();
  self.start();
  await waitFor(() => link.isUp || undefined, { what: 'own link up', timeoutMs: 10_000 });
}, 60_000);

afterAll(async () => {
  self?.stop();
  await link?.stop();
  await cloud?.endAsync();
  await stopSouthbound?.();
  await slave?.stop();
  await broker?.dispose();
});

async function command(method: string, params: unknown, raw?: string): Promise<Record<string, unknown>> {
  const id = String((nextId += 1));
  await cloud.publishAsync(`command/send/${id}`, raw ?? JSON.stringify({ method, params, id: Number(id) }), { qos: 1 });
  return waitFor(() => replies.get(id), { what: `reply ${id}`, timeoutMs: 10_000 });
}

describe('own device on a real bus and broker', () => {
  it('read: registers from the device, raw and typed', async () => {
    expect(await command('read', { bus: 'plc', unit: 1, address: 5, count: 3 })).toEqual({
      method: 'read', id: nextId, params: { bus: 'plc', unit: 1, table: 'holding', address: 5, raw: [1005, 1006, 1007] },
    });
    const typed = await command('read', { bus: 'plc', unit: 1, table: 'input', address: 0, count: 2, type: 'uint32', wordOrder: 'little' });
    // Little word order: (1501 << 16) | 1500 and (1503 << 16) | 1502.
    expect(typed.params).toMatchObject({ values: [{ address: 0, value: 1501 * 65536 + 1500 }, { address: 2, value: 1503 * 65536 + 1502 }] });
    expect((await command('read', { bus: 'plc', unit: 1, table: 'discrete', address: 0, count: 4 })).params).toMatchObject({ raw: [1, 0, 0, 1] });
  });

  it('read: the Modbus exception of the device is the answer', async () => {
    const reply = await command('read', { bus: 'plc', unit: 1, address: 199, count: 2 });
    expect(reply.params).toEqual({ error: { code: 503, message: 'unit 1 answered with Modbus exception 2 (Illegal data address)' } });
  });

  it('read: hostile params are refused before the bus', async () => {
    const before = busTransactions();
    const cases: unknown[] = [{ bus: 'plc', unit: 1, address: -1 }, { bus: 'plc', unit: 1, address: 0, count: 100_000 }, { bus: 'nowhere', unit: 1, address: 0 }, 'not-an-object'];
    for (const params of cases) {
      const reply = await command('read', params);
      expect((reply.params as { error: { code: number } }).error.code).toBe(400);
    }
    const malformed = await command('', null, '{"method": "read", "id": ');
    expect(malformed.params).toMatchObject({ error: { code: 400, message: 'payload is not valid JSON' } });
    expect(busTransactions()).toBe(before);
  });

  it('poll: one cycle of the device now, the sample is the reply and goes the usual way', async () => {
    const before = samples.length;
    const reply = await command('poll', { device: 'meter' });
    expect(reply.params).toMatchObject({ device: 'meter', values: { h0: 1000, i2: 1502 }, errors: [] });
    expect(samples.length).toBe(before + 1);
    expect(samples.at(-1)?.values).toEqual({ h0: 1000, i2: 1502 });
  });

  it('own attributes arrive on the identity\'s attributes topic', async () => {
    const report = await waitFor(() => reports.at(-1), { what: 'own attributes', timeoutMs: 10_000 });
    expect(report).toMatchObject({ version: 'test', devices_online: 1, devices_total: 1, buses: { plc: { up: true } } });
    expect(typeof report.rss_mb).toBe('number');
  });
});
