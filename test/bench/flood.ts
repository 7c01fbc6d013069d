// `npm run bench -- flood`: 10,000 QoS-1 commands for one device (a child process publishes them
// through mosquitto as fast as the broker takes them) while a second device on the same Modbus
// line only polls, every 100 ms (the flood lasts a few seconds: enough periods for a p99). Measured in the gateway's process, quiet first and then during
// the flood of the same run: the event-loop delay (target max < 50 ms) and the polling device's
// period p99 (target <= 1.5x quiet).
import { spawn } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startGateway } from '../../src/main.js';
import { silentLogger } from '../../src/ops/log.js';
import { Mosquitto } from '../helpers/mosquitto.js';
import { meterDevice, startSite, waitFor } from '../system/harness.js';
import { p99Period } from './hostile-slow.js';

const POLL_MS = 100;
const COMMANDS = Number(process.env.BENCH_FLOOD_COMMANDS ?? 10_000);

/** Publishes `count` read commands, QoS 1, and exits once every one has its reply; prints the busy count. */
const PUBLISHER = `
import mqtt from 'mqtt';
const [url, count] = [process.argv[1], Number(process.argv[2])];
const client = await mqtt.connectAsync(url, { clientId: 'flood' });
let replies = 0, busy = 0;
client.on('message', (_topic, payload) => {
  replies += 1;
  if (payload.includes('"code":429')) busy += 1;
  if (replies === count) { process.stdout.write(JSON.stringify({ replies, busy })); client.end(false, () => process.exit(0)); }
});
await client.subscribeAsync('command/reply/+', { qos: 1 });
// Paced by batch, as fast as the gateway answers, so the broker's queue (1000 per client) never drops any.
const batch = 500;
for (let sent = 0; sent < count; sent += batch) {
  for (let id = sent + 1; id <= Math.min(count, sent + batch); id += 1) {
    client.publish('command/send/' + id, JSON.stringify({ method: 'read', params: { keys: ['voltage'] }, id }), { qos: 1 });
  }
  while (replies < sent + batch - 100 && replies < count) await new Promise((r) => setTimeout(r, 5));
}
`;

function flood(url: string): Promise<{ replies: number; busy: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', PUBLISHER, url, String(COMMANDS)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as { replies: number; busy: number }) : reject(new Error(`publisher exited ${String(code)}`))));
  });
}

interface Phase { lagMaxMs: number; lagP99Ms: number; pollP99Ms: number; polls: number }

/** Times the polling device's requests (simulator counter, sampled every 2 ms) and the loop delay during `during`. */
async function phase(pollCount: () => number, during: () => Promise<unknown>): Promise<Phase> {
  const loop = monitorEventLoopDelay({ resolution: 5 });
  const times: number[] = [];
  let seen = pollCount();
  const sampler = setInterval(() => {
    const now = pollCount();
    // A cycle is several requests in a row: one time per cycle.
    if (now > seen && Date.now() - (times.at(-1) ?? 0) > POLL_MS / 4) times.push(Date.now());
    seen = now;
  }, 2);
  loop.enable();
  try {
    await during();
  } finally {
    loop.disable();
    clearInterval(sampler);
  }
  return { lagMaxMs: loop.max / 1e6, lagP99Ms: loop.percentile(99) / 1e6, pollP99Ms: p99Period(times), polls: times.length };
}

export async function run(log: (line: string) => void, quietMs = 10_000): Promise<void> {
  const site = await startSite();
  const broker = await Mosquitto.start();
  const polling = { ...meterDevice('meter-2', 2, '', POLL_MS) };
  delete polling.cloud;
  const config = site.config([meterDevice('meter-1', 1, 'tok', 500), polling], {
    mqttUrl: broker.url, apiBaseUrl: undefined, maxInboundBytes: 1 << 20, inbound: { maxKeys: 1000, maxPending: 64, busShare: 0.5 },
  });
  const gateway = await startGateway(config, { logger: silentLogger(), env: {} });
  try {
    await waitFor(() => (gateway.status().links[0]?.state === 'up' && gateway.status().devices.every((d) => d.online) ? true : undefined), 30_000);
    const polls = () => site.sim.simulator.counters(2).requests;
    const quiet = await phase(polls, () => new Promise((resolve) => setTimeout(resolve, quietMs)));
    let answered = { replies: 0, busy: 0 };
    const flooded = await phase(polls, async () => { answered = await flood(broker.url); });
    log(`## Command flood: ${COMMANDS.toLocaleString('en')} QoS-1 commands to one device (polled every 500 ms), another device on the same line polled every ${POLL_MS} ms (same run: ${quietMs / 1000} s quiet, then the flood)`);
    log('');
    log('| phase | event-loop delay max (ms, target < 50) | delay p99 (ms) | polling device period p99 (ms) | vs. quiet (target <= 1.5x) | polls |');
    log('| --- | --- | --- | --- | --- | --- |');
    for (const [name, p] of [['quiet', quiet], [`flood (${answered.replies} answered, ${answered.busy} busy)`, flooded]] as const) {
      log(`| ${name} | ${p.lagMaxMs.toFixed(1)} | ${p.lagP99Ms.toFixed(1)} | ${p.pollP99Ms.toFixed(0)} | ${(p.pollP99Ms / quiet.pollP99Ms).toFixed(2)}x | ${p.polls} |`);
    }
    log('');
  } finally {
    await gateway.stop();
    await broker.dispose();
    await site.close();
  }
}
