// `fieldgate run` publishes where its health endpoint is for `fieldgate status` run by any user:
// <runtime dir>/health.json, 0644 whatever the umask, pid/host/port/version and nothing else,
// written once the endpoint listens and removed at stop.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TSX_FROM_SOURCE } from '../../helpers/child.js';
import { freePort } from '../../helpers/mosquitto.js';
import { runCli } from '../../helpers/run-cli.js';
import { waitFor } from '../../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'fieldgate-health-address-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('fieldgate run and health.json', () => {
  it('publishes its health port in the runtime directory while it runs, and status finds it there', async () => {
    const port = await freePort();
    const runtime = join(dir, 'run');
    const site = join(dir, 'site.yaml');
    writeFileSync(site, `gateway:\n  stateDir: ${join(dir, 'state')}\n  health: { port: ${port} }\nbuses:\n  - { name: plant, kind: tcp, host: 127.0.0.1, port: 1 }\ndevices:\n  - { name: m1, bus: plant, unitId: 1, points: [{ id: p, table: holding, address: 0 }] }\n`);
    mkdirSync(runtime);
    const child = spawn('sh', ['-c', 'umask 0077; exec "$@"', 'sh', process.execPath, ...TSX_FROM_SOURCE, 'test/system/fixtures/cli.ts', 'run', '--config', site], {
      env: { PATH: process.env.PATH, FIELDGATE_RUNTIME_DIR: runtime }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const file = join(runtime, 'health.json');
    try {
      await waitFor(() => (existsSync(file) ? true : undefined), { what: 'health.json', timeoutMs: 60_000 });
      expect(statSync(file).mode & 0o777).toBe(0o644);
      const published = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      expect(Object.keys(published).sort()).toEqual(['host', 'pid', 'port', 'version']);
      expect(published).toMatchObject({ pid: child.pid, host: '127.0.0.1', port });
      const status = await runCli(['status', '--json'], { FIELDGATE_RUNTIME_DIR: runtime });
      expect(status.code).toBe(0);
      expect(JSON.parse(status.out)).toMatchObject({ pid: child.pid });
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited, out.slice(-2000)).toBe(0);
    expect(existsSync(file)).toBe(false);
  }, 90_000);
});
