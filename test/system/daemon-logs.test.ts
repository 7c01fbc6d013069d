// The daemon as a child process: JSON logs on stdout and nothing else on stdout or stderr,
// transitions logged, ordered stop on SIGTERM, and not one secret in a full run's logs at trace level.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { deviceApi, startSite, waitFor, type Site } from './harness.js';
import { TSX_FROM_SOURCE } from '../helpers/child.js';

const SECRETS = ['demo-meter-1-token', 'demo-meter-2-token', 'demo-project-key', 'demo-access-key', 'demo-secret-key'];

describe('fieldgate run (child process)', () => {
  let site: Site | undefined;
  afterEach(async () => site?.close());

  it('logs JSON transitions, stops cleanly on SIGTERM, and never logs a secret', async () => {
    site = await startSite();
    const s = site;
    const file = join(s.stateDir, 'site.yaml');
    writeFileSync(file, `
gateway:
  stateDir: ${join(s.stateDir, 'state')}
  health: { port: 0 }
  cloud:
    mqttUrl: mqtt://127.0.0.1:${s.emulator.mqttPort}
    apiBaseUrl: http://127.0.0.1:${s.emulator.httpPort}
    appId: demo-app
buses:
  - { name: plant, kind: tcp, host: 127.0.0.1, port: ${s.sim.tcp?.port}, timeoutMs: 500 }
devices:
  - name: meter-1
    bus: plant
    unitId: 1
    pollIntervalMs: 200ms
    cloud: { accessToken: demo-meter-1-token }
    points:
      - { id: setpoint, table: holding, address: 0, type: int16, scale: 0.1, writable: true, min: 0, max: 100 }
      - { id: voltage, table: input, address: 0, scale: 0.1 }
  - name: meter-2
    bus: plant
    unitId: 2
    pollIntervalMs: 200ms
    cloud: { deviceId: dev-meter-2 }
    points:
      - { id: setpoint, table: holding, address: 0, type: int16, scale: 0.1 }
`.replace('health: { port: 0 }', 'health: { enabled: false }'));
    const child = spawn(process.execPath, [...TSX_FROM_SOURCE, 'test/system/fixtures/cli.ts', 'run', '--config', file], {
      env: {
        PATH: process.env.PATH, LOG_LEVEL: 'trace', FIELDGATE_PROJECT_KEY: 'demo-project-key',
        FIELDGATE_ACCESS_KEY: 'demo-access-key', FIELDGATE_SECRET_KEY: 'demo-secret-key',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitFor(async () => {
        const b = await deviceApi(s, 'demo-meter-2-token', 'GET', '/attributes');
        return (b.attributes as Record<string, unknown> | undefined)?.online === true ? true : undefined;
      }, 30_000);
      await deviceApi(s, 'demo-meter-1-token', 'POST', '/attributes', { setpoint: 12.5, nope: 1 });
      await waitFor(() => (s.sim.simulator.getRegister(1, 'holding', 0) === 125 ? true : undefined));
      s.sim.simulator.setFault(2, { timeout: true });
      await waitFor(() => (out.includes('"device offline"') ? true : undefined), 30_000);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    // Only JSON, on both streams: a runtime warning (DEP0169 from mqtt.js's url.parse) would be a
    // plain line in the journal that `fieldgate logs --level` cannot filter.
    for (const line of `${out}${err}`.split('\n').filter((l) => l !== '')) {
      expect(() => JSON.parse(line) as unknown, `not JSON: ${line.slice(0, 200)}`).not.toThrow();
    }
    const lines = out.trim().split('\n');
    const records = lines.map((l) => JSON.parse(l) as { msg: string; level: number });
    const messages = records.map((r) => r.msg);
    expect(messages).toContain('gateway started');
    expect(messages).toContain('cloud link up');
    expect(messages).toContain('cloud write refused');
    expect(messages.filter((m) => m === 'device offline')).toHaveLength(1);
    expect(messages.at(-1)).toBe('gateway stopped');
    for (const secret of SECRETS) {
      expect(out.includes(secret), `stdout leaks ${secret}`).toBe(false);
      expect(err.includes(secret), `stderr leaks ${secret}`).toBe(false);
    }
    console.log(`daemon run: ${lines.length} log lines checked for ${SECRETS.length} secrets`);
  }, 90_000);
});
