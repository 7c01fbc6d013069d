// Reconnect after an outage: a link waiting out a long backoff delay reaches a broker that is back
// through the shared TCP probe (reconnect.probeMs), while a broker that answers and refuses keeps
// the full backoff (no probe: its TCP port is open, it is not away).
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { BrokerProbes, probeTargetOf, type ProbeTarget } from '../../../src/cloud/mqtt/broker-probe.js';
import { MqttLink, type MqttLinkOptions } from '../../../src/cloud/mqtt/link.js';
import { silentLogger } from '../../../src/ops/log.js';
import { systemTime } from '../../../src/core/time.js';
import { captureLog } from '../../helpers/capture-log.js';
import { freePort, Mosquitto } from '../../helpers/mosquitto.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/** Probes that count what links asked for, probing for real. */
class CountingProbes extends BrokerProbes {
  readonly watched: ProbeTarget[] = [];
  override watch(target: ProbeTarget, everyMs: number, onReachable: () => void): () => void {
    this.watched.push(target);
    return super.watch(target, everyMs, onReachable);
  }
}

function link(url: string, options: Partial<MqttLinkOptions>): MqttLink {
  const created = new MqttLink({
    name: 'pump', url,
    credentials: async () => ({ clientId: 'dev-1', username: 'token', password: 'pk' }),
    streams: [], keepaliveS: 30, connectTimeoutMs: 5000,
    // A first retry after 60 s: without the probe, nothing before that.
    reconnect: { initialMs: 60_000, maxMs: 60_000, jitter: 0.2, probeMs: 200 },
    log: silentLogger(), ...options,
  });
  cleanups.push(() => created.stop());
  return created;
}

describe('reconnect probe', () => {
  it('reaches a broker back from an outage long before the 60 s backoff delay ends', async () => {
    const mq = await Mosquitto.start();
    cleanups.push(() => mq.dispose());
    const captured = captureLog();
    const probes = new CountingProbes(systemTime);
    // The broker is away when the link tries: its port refuses, a 60 s wait follows, probed. (A
    // link that was up and is dropped waits unprobed first: a broker kicking a duplicate client id
    // must not be answered at probe speed.)
    await mq.stop();
    const device = link(mq.url, { log: captured.log, probes });
    device.start();
    await expect.poll(() => probes.watched.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
    const scheduled = captured.messages('cloud link reconnect scheduled');
    expect(Number(scheduled.at(-1)?.delay)).toBeGreaterThan(40_000);
    const back = Date.now();
    await mq.restart();
    // Generous for a slow machine, and still well inside the 48-60 s the backoff alone would wait.
    await expect.poll(() => device.isUp, { timeout: 30_000 }).toBe(true);
    console.log(`broker back: link up after ${Date.now() - back} ms (probe every 200 ms, backoff delay ${scheduled.at(-1)?.delay} ms)`);
    expect(probes.watched).toEqual([{ host: '127.0.0.1', port: mq.port }]);
  }, 60_000);

  it('keeps the full backoff for a broker that accepts the connection and closes it (refusing, not away)', async () => {
    const refusing: Server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', () => resolve()));
    cleanups.push(() => new Promise((resolve) => refusing.close(resolve)));
    const port = (refusing.address() as { port: number }).port;
    const captured = captureLog();
    const probes = new CountingProbes(systemTime);
    const device = link(`mqtt://127.0.0.1:${port}`, { log: captured.log, probes, reconnect: { initialMs: 5_000, maxMs: 60_000, jitter: 0, probeMs: 200 } });
    device.start();
    await expect.poll(() => captured.messages('cloud link reconnect scheduled').length, { timeout: 15_000 }).toBeGreaterThanOrEqual(1);
    expect(probes.watched).toEqual([]);
  });

  it('probes a closed port (no broker) while waiting', async () => {
    const port = await freePort();
    const probes = new CountingProbes(systemTime);
    const device = link(`mqtt://127.0.0.1:${port}`, { probes });
    device.start();
    await expect.poll(() => probes.watched.length, { timeout: 15_000 }).toBe(1);
  });

  it.each([
    ['mqtt://broker.example:1884', { host: 'broker.example', port: 1884 }],
    ['mqtt://broker.example', { host: 'broker.example', port: 1883 }],
    ['mqtts://broker.example', { host: 'broker.example', port: 8883 }],
    ['wss://broker.example/mqtt', { host: 'broker.example', port: 443 }],
    ['mqtt://[::1]:1883', { host: '::1', port: 1883 }],
    ['not a url', undefined],
    ['gopher://x', undefined],
  ])('probe target of %s', (url, expected) => {
    expect(probeTargetOf(url)).toEqual(expected);
  });
});
