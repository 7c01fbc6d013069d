import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { Forwarder, TokenBucket } from '../../../src/cloud/forwarding/forwarder.js';
import { MqttLink } from '../../../src/cloud/mqtt/link.js';
import { Outbox } from '../../../src/cloud/outbox/outbox.js';
import { silentLogger } from '../../../src/ops/log.js';
import { Mosquitto } from '../../helpers/mosquitto.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
});

/**
 * The cloud side: a persistent session (clean: false) on a broker with persistence, so what the
 * broker PUBACKed to the gateway survives the restart and still reaches this subscriber.
 */
async function subscriber(url: string) {
  const received: number[] = [];
  const client = mqtt.connect(url, { protocolVersion: 4, clientId: 'cloud-side', clean: false, reconnectPeriod: 100 });
  client.on('message', (_topic, payload) => received.push((JSON.parse(payload.toString()) as { n: number }).n));
  cleanups.push(() => client.endAsync(true));
  await new Promise<void>((resolve, reject) => {
    client.once('connect', () => client.subscribe('attributes', { qos: 1 }, (err) => (err ? reject(err) : resolve())));
  });
  return { received };
}

/** First occurrence of each record, in arrival order. */
function firstOccurrences(received: number[]): number[] {
  const seen = new Set<number>();
  return received.filter((n) => (seen.has(n) ? false : (seen.add(n), true)));
}

describe('Forwarder with mosquitto', () => {
  it('delivers every record at least once and in order across a broker restart', { timeout: 90_000 }, async () => {
    const broker = await Mosquitto.start({ persistence: true });
    cleanups.push(() => broker.dispose());
    const dir = mkdtempSync(join(tmpdir(), 'fwd-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const cloud = await subscriber(broker.url);

    const link = new MqttLink({
      name: 'pump', url: broker.url, streams: [], keepaliveS: 30, connectTimeoutMs: 5000,
      reconnect: { initialMs: 50, maxMs: 300, jitter: 0.2 }, log: silentLogger(),
      credentials: async () => ({ clientId: 'dev-1', username: 'u', password: 'p' }),
    });
    cleanups.push(() => link.stop());
    let forwarder: Forwarder | undefined;
    const outbox = new Outbox({
      path: join(dir, 'outbox.db'), flushIntervalMs: 10, flushRecords: 100,
      onCommit: (devices) => { if (devices.has('pump')) forwarder?.notify(); },
    });
    cleanups.push(() => outbox.close());
    forwarder = new Forwarder({ device: 'pump', outbox, link, log: silentLogger(), window: 20, pacer: new TokenBucket(2000, 20) });
    cleanups.push(() => forwarder?.stop());
    link.start();
    forwarder.start();

    const total = 3000;
    let appended = 0;
    const appender = setInterval(() => {
      for (let i = 0; i < 10 && appended < total; i += 1) {
        outbox.append('pump', JSON.stringify({ n: appended }), Date.now());
        appended += 1;
      }
    }, 2);
    cleanups.push(() => clearInterval(appender));

    await expect.poll(() => cloud.received.length, { timeout: 30_000, interval: 10 }).toBeGreaterThan(800);
    await broker.stop();
    const duringOutage = appended;
    await expect.poll(() => appended, { timeout: 30_000 }).toBeGreaterThan(duringOutage + 200);
    await broker.restart();
    await expect.poll(() => firstOccurrences(cloud.received).length, { timeout: 45_000, interval: 50 }).toBe(total);

    const unique = firstOccurrences(cloud.received);
    expect(unique).toEqual(Array.from({ length: total }, (_, i) => i));
    await expect.poll(() => outbox.stats().depth, { timeout: 10_000 }).toBe(0);
    expect(cloud.received.length).toBeGreaterThanOrEqual(total);
  });

  it('replays a backlog left by an earlier run, in order', async () => {
    const broker = await Mosquitto.start();
    cleanups.push(() => broker.dispose());
    const dir = mkdtempSync(join(tmpdir(), 'fwd-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'outbox.db');
    const earlier = new Outbox({ path });
    for (let n = 0; n < 500; n += 1) earlier.append('pump', JSON.stringify({ n }), n);
    earlier.close();

    const cloud = await subscriber(broker.url);
    const outbox = new Outbox({ path });
    cleanups.push(() => outbox.close());
    expect(outbox.devicesWithBacklog()).toEqual(['pump']);
    const link = new MqttLink({
      name: 'pump', url: broker.url, streams: [], keepaliveS: 30, connectTimeoutMs: 5000,
      reconnect: { initialMs: 50, maxMs: 300, jitter: 0 }, log: silentLogger(),
      credentials: async () => ({ clientId: 'dev-1', username: 'u', password: 'p' }),
    });
    cleanups.push(() => link.stop());
    const forwarder = new Forwarder({ device: 'pump', outbox, link, log: silentLogger(), window: 50 });
    cleanups.push(() => forwarder.stop());
    forwarder.start();
    link.start();
    await expect.poll(() => cloud.received.length, { timeout: 30_000 }).toBe(500);
    expect(cloud.received).toEqual(Array.from({ length: 500 }, (_, i) => i));
    await expect.poll(() => outbox.stats().depth).toBe(0);
  });
});
