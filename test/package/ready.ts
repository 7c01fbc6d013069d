// Start-up time of a packaged daemon: spawn to READY=1 with the 10-device site of test:package
// (emulator and simulator here, natively), and its RSS once every device has reported.
//   node --conditions=fieldgate-source --import tsx test/package/ready.ts --node NODE --app APP_DIR [--runs 3]
// NODE may be a wrapper (qemu-aarch64 for the arm64 package). Prints one line per run and the median.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '../arm64/site.js';
import { waitFor } from '../helpers/wait.js';
import { rssText, startDaemon } from './daemon.js';
import { DEVICE_COUNT, UNITS, counterSeries, siteYaml, startCloud, startDevices } from './site.js';

const { values: args } = parseArgs({ options: { node: { type: 'string' }, app: { type: 'string' }, runs: { type: 'string', default: '3' } } });
if (!args.node || !args.app) throw new Error('usage: ready.ts --node NODE --app APP_DIR [--runs N]');
const work = mkdtempSync(join(tmpdir(), 'fieldgate-ready-'));
const ports = { healthPort: await freePort(), mqttPort: 0, httpPort: 0, modbusPort: 0 };
const cloud = await startCloud(0, 0);
const devices = await startDevices();
Object.assign(ports, { mqttPort: cloud.mqttPort, httpPort: cloud.httpPort, modbusPort: devices.tcp?.port ?? 0 });
const readyMs: number[] = [];
try {
  for (let run = 1; run <= Number(args.runs); run += 1) {
    const state = join(work, `state-${run}`);
    const site = join(work, `site-${run}.yaml`);
    writeFileSync(site, siteYaml(ports, state));
    const since = Date.now();
    const daemon = await startDaemon({
      argv: [args.node, '--optimize-for-size', '--v8-pool-size=1', '--single-threaded', join(args.app, 'bin/fieldgate.js'), 'run', '--config', site],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_ENV: 'production' }, cwd: args.app, dir: work, healthPort: ports.healthPort,
    });
    try {
      for (const unit of UNITS) {
        await waitFor(async () => (await counterSeries(cloud, unit)).some((p) => p.ts >= since), { timeoutMs: 300_000, intervalMs: 250, what: `device ${unit} in the cloud` });
      }
      const firstValuesMs = Date.now() - since;
      readyMs.push(daemon.readyMs);
      process.stdout.write(`run ${run}: READY after ${daemon.readyMs} ms, all ${DEVICE_COUNT} devices in the cloud after ${firstValuesMs} ms, RSS ${rssText(daemon.pid)}\n`);
    } finally {
      const code = await daemon.stop();
      if (code !== 0) throw new Error(`daemon exit ${code}: ${daemon.log().slice(-2000)}`);
    }
  }
  const sorted = [...readyMs].sort((a, b) => a - b);
  process.stdout.write(`start to READY, ${DEVICE_COUNT} devices, ${args.node}: median ${sorted[Math.floor(sorted.length / 2)]} ms of ${sorted.join(', ')}\n`);
} finally {
  await cloud.close();
  await devices.close();
  rmSync(work, { recursive: true, force: true });
}
