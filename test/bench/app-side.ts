// `npm run bench -- app-side`: the emulator's app-side fan-out. M attribute messages, fed as fast
// as the broker takes them (never past --app-max-pending, so none is dropped for backlog), to N
// dashboards on ws `<key>/+/attributes` at QoS 0; the time until every dashboard has every message,
// deliveries per second, losses, and the emulator process's resident memory before and after.
import { readFileSync } from 'node:fs';
import { startEmulator } from '../../packages/emulator/src/index.js';
import { parseSeed } from '../../packages/emulator/src/state/seed.js';
import { silentLogger } from '../../src/ops/log.js';
import mqtt, { type MqttClient } from 'mqtt';

const SEED = new URL('../../config/emulator-seed.yaml', import.meta.url);
const MESSAGES = Number(process.env.BENCH_APP_MESSAGES ?? 5000);
const SUBSCRIBER_COUNTS = [1, 10, 50];
const MAX_PENDING = 1000;
const DEADLINE_MS = 120_000;

const rssMb = (): number => process.memoryUsage().rss / 1024 / 1024;

/** A dashboard that only counts what it receives (it keeps nothing, so RSS is the emulator's). */
interface Counter { client: MqttClient; received: number }

async function counter(port: number, key: string, secret: string): Promise<Counter> {
  const client = await mqtt.connectAsync(`ws://127.0.0.1:${port}/mqtt`, { username: key, password: secret, protocolVersion: 4, reconnectPeriod: 0 });
  const c: Counter = { client, received: 0 };
  client.on('message', () => { c.received += 1; });
  await client.subscribeAsync(`${key}/+/attributes`, { qos: 0 });
  return c;
}

async function once(subscribers: number): Promise<string> {
  const seed = parseSeed(readFileSync(SEED, 'utf8'), Date.now());
  const emu = await startEmulator({
    httpPort: 0, mqttPort: 0, tcpPort: 0, host: '127.0.0.1', seed, logger: silentLogger(),
    appSide: { tcpPort: undefined, wsPort: 0, wssPort: undefined, tls: undefined, maxFrameBytes: 65536, maxPendingMessages: MAX_PENDING, limits: { maxSessions: 256 } },
  });
  const apps: Counter[] = [];
  try {
    const { view_key: key, view_secret: secret } = emu.state.project;
    for (let i = 0; i < subscribers; i += 1) {
      apps.push(await counter(emu.appSide?.ports.ws ?? 0, key, secret));
    }
    const device = emu.state.devices.get('dev-meter-1');
    if (!device) throw new Error('seed has no dev-meter-1');
    const rssBefore = rssMb();
    const started = performance.now();
    let sent = 0;
    while (sent < MESSAGES) {
      while (sent < MESSAGES && (emu.appSide?.stats().messagesInFlight ?? 0) < MAX_PENDING) {
        emu.link.updateCloudAttributes(device, { voltage: 230 + (sent % 10), n: (sent += 1) });
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    const end = Date.now() + DEADLINE_MS;
    while (apps.some((a) => a.received < MESSAGES) && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 5));
    const seconds = (performance.now() - started) / 1000;
    const delivered = apps.reduce((sum, a) => sum + a.received, 0);
    const stats = emu.appSide?.stats();
    const lost = MESSAGES * subscribers - delivered;
    return `| ${subscribers} | ${MESSAGES} | ${delivered} | ${lost} | ${stats?.messagesDroppedBacklog ?? 0} / ${stats?.messagesDiscardedSlow ?? 0} | ${seconds.toFixed(2)} | ${Math.round(delivered / seconds)} | ${rssBefore.toFixed(0)} -> ${rssMb().toFixed(0)} |`;
  } finally {
    for (const app of apps) await app.client.endAsync(true);
    await emu.close();
  }
}

export async function run(log: (line: string) => void): Promise<void> {
  log('\n### app-side fan-out (emulator, ws, QoS 0; subscribers in the same process)\n');
  log('| subscribers | messages | delivered | lost | dropped backlog / discarded slow | s | deliveries/s | RSS MB |');
  log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const n of SUBSCRIBER_COUNTS) log(await once(n));
}
