// `fieldgate status` asks the port the service listens on: from --port, the port the daemon
// published, the shell, the service's environment file, or its site file (--config too), against
// a real health endpoint.
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishHealthAddress } from '../../../src/ops/health-address.js';
import { startHealthServer, type HealthServer } from '../../../src/ops/health.js';
import { silentLogger } from '../../../src/ops/log.js';
import type { GatewayStatus } from '../../../src/ops/status.js';
import { freePort } from '../../helpers/mosquitto.js';
import { runCli } from '../../helpers/run-cli.js';

const STATUS: GatewayStatus = {
  version: '9.9.9', startedAt: '2026-11-26T00:00:00.000Z', uptimeS: 5, buses: [], links: [], outbox: null, rateQueue: null,
  devices: [{ name: 'meter-7', bus: 'line1', online: true, points: 3, lastPollAgeMs: 100, skippedCycles: 0 }],
};

describe('fieldgate status finds the service\'s port', () => {
  let server: HealthServer;
  let dir: string;
  let unused: number;
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  beforeAll(async () => {
    server = await startHealthServer({ port: 0, snapshot: () => STATUS, stalledLoops: () => [], logger: silentLogger() });
    dir = mkdtempSync(join(tmpdir(), 'fieldgate-status-'));
    unused = await freePort();
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('from FIELDGATE_HEALTH_PORT in the environment file', async () => {
    const env = file('a.env', `LOG_LEVEL=info\nFIELDGATE_HEALTH_PORT=${server.port}\n`);
    const r = await runCli(['status', '--env-file', env]);
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out).toContain('fieldgate 9.9.9');
    expect(r.out).toContain('meter-7');
  });

  it('from the site file given with --config when the environment file has no port', async () => {
    const env = file('b.env', 'LOG_LEVEL=info\n');
    const site = file('b.yaml', `gateway:\n  health: { enabled: true, port: ${server.port} }\nbuses: []\ndevices: []\n`);
    const r = await runCli(['status', '--env-file', env, '--config', site, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ version: '9.9.9' });
  });

  it('from the site file in FIELDGATE_CONFIG, as `fieldgate run` takes it', async () => {
    const site = file('c.yaml', `gateway:\n  health:\n    port: ${server.port}\n`);
    const env = file('c.env', '# nothing about the port\n');
    expect((await runCli(['status', '--env-file', env], { FIELDGATE_CONFIG: site })).code).toBe(0);
  });

  it('lets the environment win over the site file, and --port and the shell over both', async () => {
    const site = file('d.yaml', `gateway:\n  health: { port: ${unused} }\n`);
    const env = file('d.env', `FIELDGATE_HEALTH_PORT=${server.port}\n`);
    expect((await runCli(['status', '--env-file', env, '--config', site])).code).toBe(0);
    const badEnv = file('d2.env', `FIELDGATE_HEALTH_PORT=${unused}\n`);
    expect((await runCli(['status', '--env-file', badEnv], { FIELDGATE_HEALTH_PORT: String(server.port) })).code).toBe(0);
    expect((await runCli(['status', '--env-file', badEnv, '--port', String(server.port)])).code).toBe(0);
  });

  it('says where the port came from when nothing answers there', async () => {
    const env = file('e.env', `FIELDGATE_HEALTH_PORT=${unused}\n`);
    const r = await runCli(['status', '--env-file', env]);
    expect(r.code).toBe(69);
    expect(r.err).toBe(`fieldgate status: cannot reach the daemon on 127.0.0.1:${unused} (port from FIELDGATE_HEALTH_PORT in ${env}): ECONNREFUSED; is it running with the health endpoint on?\n`);
  });

  it.each<[string, string, string | undefined, RegExp, number]>([
    ['a bad port in the environment file', 'FIELDGATE_HEALTH_PORT=junk\n', undefined, /FIELDGATE_HEALTH_PORT in .*f\.env: "junk" is not a port number 1\.\.65535/, 78],
    ['a port out of range', 'FIELDGATE_HEALTH_PORT=70000\n', undefined, /"70000" is not a port number/, 78],
    ['a site file with the endpoint off', '', 'gateway:\n  health: { enabled: false }\n', /the health endpoint is switched off \(gateway\.health\.enabled: false\)/, 78],
    ['a site file with a bad port', '', 'gateway:\n  health: { port: "x" }\n', /gateway\.health\.port must be a port number/, 78],
    ['a site file that does not parse', '', 'gateway: [\n', /YAML syntax error/, 78],
  ])('refuses %s in one line', async (_name, envText, siteText, expected, code) => {
    const env = file('f.env', envText);
    const args = ['status', '--env-file', env];
    if (siteText !== undefined) args.push('--config', file('f.yaml', siteText));
    const r = await runCli(args);
    expect(r.code).toBe(code);
    expect(r.err).toMatch(expected);
    expect(r.err.trim().split('\n')).toHaveLength(1);
  });

  it('refuses hostile environment files in one line: huge, a directory; and reads past binary junk', async () => {
    const huge = file('huge.env', `FIELDGATE_HEALTH_PORT=${server.port}\n${'#'.repeat(5 * 1024 * 1024)}\n`);
    expect(await runCli(['status', '--env-file', huge])).toMatchObject({ code: 78, err: `fieldgate status: ${huge}: larger than 4194304 bytes\n` });
    expect(await runCli(['status', '--env-file', dir])).toMatchObject({ code: 78, err: `fieldgate status: ${dir}: is a directory\n` });
    const junk = file('junk.env', `\u0000\u00ff\u0001=x\n${'A'.repeat(100_000)}\nFIELDGATE_HEALTH_PORT=${server.port}\n`);
    expect((await runCli(['status', '--env-file', junk])).code).toBe(0);
    const deep = file('deep.yaml', `gateway: ${'['.repeat(5000)}\n`);
    const r = await runCli(['status', '--env-file', file('h.env', ''), '--config', deep]);
    expect(r.code).toBe(78);
    expect(r.err.trim().split('\n')).toHaveLength(1);
  });

  it('asks the port the running daemon published in its runtime directory, readable without root', async () => {
    const runtime = mkdtempSync(join(tmpdir(), 'fieldgate-runtime-'));
    try {
      const unpublish = publishHealthAddress(runtime, { pid: process.pid, host: '127.0.0.1', port: server.port, version: '9.9.9' });
      expect(statSync(join(runtime, 'health.json')).mode & 0o777).toBe(0o644);
      // The environment says another port: the daemon's own word wins.
      const r = await runCli(['status'], { FIELDGATE_RUNTIME_DIR: runtime, FIELDGATE_HEALTH_PORT: String(unused) });
      expect(r).toMatchObject({ code: 0, err: '' });
      expect(r.out).toContain('meter-7');
      unpublish();
      expect(existsSync(join(runtime, 'health.json'))).toBe(false);
      // A daemon that died without removing it: its file is not believed.
      writeFileSync(join(runtime, 'health.json'), JSON.stringify({ pid: 2 ** 22 + 1, host: '127.0.0.1', port: unused, version: '1' }));
      expect((await runCli(['status'], { FIELDGATE_RUNTIME_DIR: runtime, FIELDGATE_HEALTH_PORT: String(server.port) })).code).toBe(0);
      // Junk in the file: ignored the same way.
      writeFileSync(join(runtime, 'health.json'), '{"pid": "x", "port": 99999}');
      expect((await runCli(['status'], { FIELDGATE_RUNTIME_DIR: runtime, FIELDGATE_HEALTH_PORT: String(server.port) })).code).toBe(0);
    } finally {
      rmSync(runtime, { recursive: true, force: true });
    }
  });

  it('refuses a missing file named on the command line, and a bad --port', async () => {
    expect(await runCli(['status', '--env-file', join(dir, 'none.env')])).toMatchObject({ code: 78, err: `fieldgate status: ${join(dir, 'none.env')}: file not found\n` });
    const env = file('g.env', '');
    expect(await runCli(['status', '--env-file', env, '--config', join(dir, 'none.yaml')])).toMatchObject({ code: 78, err: `fieldgate status: ${join(dir, 'none.yaml')}: file not found\n` });
    expect((await runCli(['status', '--port', '0'])).code).toBe(64);
  });
});
