// An independent client on the app side: paho-mqtt (the vendor's Python sample's library, Debian's
// python3-paho-mqtt under /usr/bin/python3) over wss at /mqtt with the view key, trusting the
// emulator's CA, as the cloud's documentation says. It is refused with a wrong secret, and with
// the right one receives a device's attribute change on `<key>/+/attributes`.
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../../packages/emulator/src/index.js';
import { parseSeed } from '../../../packages/emulator/src/state/seed.js';
import { silentLogger } from '../../../src/ops/log.js';
import { requirePythonModules } from '../../helpers/peers.js';
import { PYTHON } from '../../helpers/pymodbus.js';
import { makeTestCertificates, type TestCertificates } from '../../helpers/tls-certs.js';
import { waitFor } from '../../system/harness.js';
import { SEED_PATH } from './helpers.js';

const SCRIPT = new URL('../../helpers/paho_app_subscriber.py', import.meta.url).pathname;

interface PahoRun {
  lines(): Array<Record<string, any>>;
  exited: Promise<number | null>;
}

function runPaho(emu: Emulator, certs: TestCertificates, secret: string, count: number): PahoRun {
  const { view_key: key } = emu.state.project;
  const child = spawn(PYTHON, [SCRIPT, '127.0.0.1', String(emu.appSide?.ports.wss ?? 0), '/mqtt', certs.caFile, key, secret, `${key}/+/attributes`, String(count), '30'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
  child.stderr.on('data', (c: Buffer) => { err += c.toString(); });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => {
    if (code !== 0 && code !== 2) process.stderr.write(`paho subscriber exited ${String(code)}: ${err}\n`);
    resolve(code);
  }));
  return { lines: () => out.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, any>), exited };
}

describe('app-side subscription with paho-mqtt over wss', () => {
  let certs: TestCertificates;
  let emu: Emulator | undefined;
  beforeAll(() => {
    requirePythonModules(PYTHON, ['paho.mqtt.client']);
    certs = makeTestCertificates();
  });
  afterAll(() => rmSync(certs.dir, { recursive: true, force: true }));
  afterEach(async () => {
    await emu?.close();
    emu = undefined;
  });

  async function start(): Promise<Emulator> {
    const seed = parseSeed(readFileSync(SEED_PATH, 'utf8'), Date.now());
    emu = await startEmulator({
      httpPort: 0, mqttPort: 0, tcpPort: 0, host: '127.0.0.1', seed, logger: silentLogger(),
      appSide: { tcpPort: undefined, wsPort: undefined, wssPort: 0, tls: { cert: readFileSync(certs.certFile), key: readFileSync(certs.keyFile) }, maxFrameBytes: 65536 },
    });
    return emu;
  }

  it('is refused with CONNACK 5 for a wrong secret', async () => {
    const e = await start();
    const paho = runPaho(e, certs, 'not-the-secret', 1);
    expect(await paho.exited).toBe(2);
    expect(paho.lines()).toEqual([{ connack: 5 }]);
  }, 60_000);

  it('logs in, is granted QoS 0 and receives an attribute change of a device', async () => {
    const e = await start();
    const paho = runPaho(e, certs, e.state.project.view_secret, 1);
    await waitFor(() => paho.lines().find((l) => 'granted' in l), 30_000);
    expect(paho.lines().slice(0, 2)).toEqual([{ connack: 0 }, { granted: [0] }]);
    const meter = e.state.devices.get('dev-meter-1');
    if (!meter) throw new Error('seed has no dev-meter-1');
    e.link.updateCloudAttributes(meter, { note: 'from paho test' });
    expect(await paho.exited).toBe(0);
    expect(paho.lines()[2]).toEqual({
      topic: `${e.state.project.view_key}/${meter.view_token}/attributes`,
      payload: {
        attributes: { note: 'from paho test' }, source: 'cloud', ts: expect.any(Number),
        device: { id: 'dev-meter-1', name: meter.name, type: meter.type, device_key: meter.device_key },
      },
    });
  }, 60_000);
});
