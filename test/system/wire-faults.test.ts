// The daemon (child process) on two simulated RS-485 lines (socat ptys) with the faults of issue
// 20: an adapter that echoes every request, once with `echo: false` (every read fails, named once
// in the log) and once with `echo: true` (values reach the cloud), and a device whose reads carry
// one register too many (a length mismatch, not a CRC error). Counts, not timings, are checked.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createPtyPair, parseSimMap, startSimulation, type PtyPair, type Simulation } from '../../packages/simulator/src/index.js';
import { silentLogger } from '../../src/ops/log.js';
import { TSX_FROM_SOURCE } from '../helpers/child.js';
import { deviceApi, startSite, waitFor, type Site } from './harness.js';

const MAP = `
units:
  1:
    input: { 0: 2301 }
  2:
    input: { 0: 2302 }
    faults: { extraRegisters: 1 }
`;

describe('fieldgate run on echoing and off-by-one RS-485 lines', () => {
  let site: Site | undefined;
  const lines: Array<{ pty: PtyPair; sim: Simulation }> = [];
  afterEach(async () => {
    for (const { pty, sim } of lines.splice(0)) {
      await sim.close();
      await pty.close();
    }
    await site?.close();
  });

  async function echoingLine(): Promise<{ pty: PtyPair; sim: Simulation }> {
    const map = parseSimMap(MAP);
    if (!map.ok) throw new Error(map.problems.join('; '));
    const pty = await createPtyPair();
    const sim = await startSimulation({ map: map.map, logger: silentLogger(), rtu: { path: pty.b }, line: { baud: 19200, parity: 'even', dataBits: 8, stopBits: 1 }, echo: true });
    lines.push({ pty, sim });
    return { pty, sim };
  }

  it('names the echo once, delivers values with echo: true, calls one register too many a length mismatch', async () => {
    site = await startSite();
    const s = site;
    const wrong = await echoingLine();
    const right = await echoingLine();
    const file = join(s.stateDir, 'site.yaml');
    writeFileSync(file, `
gateway:
  stateDir: ${join(s.stateDir, 'state')}
  health: { enabled: false }
  cloud:
    mqttUrl: mqtt://127.0.0.1:${s.emulator.mqttPort}
    apiBaseUrl: http://127.0.0.1:${s.emulator.httpPort}
    appId: demo-app
buses:
  - { name: wrong, kind: rtu, path: ${wrong.pty.a}, baudRate: 19200, timeoutMs: 300, echo: false }
  - { name: right, kind: rtu, path: ${right.pty.a}, baudRate: 19200, timeoutMs: 300, echo: true }
devices:
${[['meter-1', 'wrong', 1], ['meter-2', 'right', 1], ['meter-3', 'right', 2]].map(([name, bus, unit]) => `  - { name: ${name}, bus: ${bus}, unitId: ${unit}, pollIntervalMs: 100ms, cloud: { accessToken: demo-${name}-token }, points: [{ id: voltage, table: input, address: 0, scale: 0.1 }] }`).join('\n')}
`);
    const child = spawn(process.execPath, [...TSX_FROM_SOURCE, 'test/system/fixtures/cli.ts', 'run', '--config', file], {
      env: { PATH: process.env.PATH, LOG_LEVEL: 'info', FIELDGATE_PROJECT_KEY: 'demo-project-key', FIELDGATE_ACCESS_KEY: 'demo-access-key', FIELDGATE_SECRET_KEY: 'demo-secret-key' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', () => undefined);
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      // The echo-stripped line delivers its value to the cloud.
      await waitFor(async () => {
        const b = await deviceApi(s, 'demo-meter-2-token', 'GET', '/attributes');
        return (b.attributes as Record<string, unknown> | undefined)?.voltage === 230.1 ? true : undefined;
      }, 30_000);
      // Many polls of the echoing line and of the off-by-one unit have failed by now.
      await waitFor(() => (wrong.sim.simulator.counters(1).requests >= 3 && right.sim.simulator.counters(2).requests >= 3 ? true : undefined), 30_000);
    } catch (err) {
      console.log(out.split('\n').slice(-15).join('\n'));
      throw err;
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    const records = out.trim().split('\n').map((l) => JSON.parse(l) as { msg: string; bus?: string; hint?: string; reason?: string; device?: string; point?: string });
    const echoLines = records.filter((r) => r.msg === 'bus echo setting does not match the line');
    expect(echoLines).toHaveLength(1);
    expect(echoLines[0]).toMatchObject({ bus: 'wrong', hint: 'the line echoes requests: set echo: true on this bus' });
    const offline = records.filter((r) => r.msg === 'device offline');
    expect(offline.find((r) => r.device === 'meter-1')?.reason).toContain('the line echoes requests: set echo: true on this bus');
    expect(offline.find((r) => r.device === 'meter-3')?.reason).toContain('reply length mismatch: 2 registers (byte count 4, CRC good) to a read of 1 registers');
    expect(offline.filter((r) => r.device === 'meter-2')).toEqual([]);
    expect(records.filter((r) => r.reason?.includes('CRC error'))).toEqual([]);
    console.log(`wire faults: ${wrong.sim.simulator.counters(1).requests} requests on the echoing line, ${echoLines.length} echo log line, ${offline.length} device offline lines`);
  }, 90_000);
});
