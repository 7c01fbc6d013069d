// `run` and `validate` refuse the same machine-side problems (state dir, CA file) with exit 78, no stack.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'fg-run-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = runCli;

function site(gateway: string): string {
  const file = join(dir, `site-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, `gateway:\n${gateway}\nbuses:\n  - { name: line1, kind: tcp, host: 127.0.0.1 }\ndevices:\n  - { name: m, bus: line1, unitId: 1, points: [{ id: v, table: input, address: 0 }] }\n`);
  return file;
}

describe('machine-side config problems', () => {
  const stateFile = join(dir, 'state-is-a-file');
  writeFileSync(stateFile, 'x');

  it.each(['run', 'validate'])('%s: a state dir that is a file and a missing CA file exit 78 with both problems', async (command) => {
    const file = site(`  stateDir: ${stateFile}\n  cloud:\n    caFile: ${join(dir, 'missing-ca.pem')}`);
    const r = await run(command === 'run' ? ['run', '--config', file] : ['validate', file]);
    expect(r.code).toBe(78);
    expect(r.out).toBe('');
    expect(r.err).toContain(`gateway.stateDir: is a file, not a directory (${stateFile})`);
    expect(r.err).toContain('gateway.cloud.caFile: cannot read the CA file: does not exist');
    expect(r.err).not.toMatch(/\n\s+at /);
  });

  it('run refuses an unknown FIELDGATE_LOG_LEVELS component before starting anything (was silently ignored)', async () => {
    const file = site(`  stateDir: ${join(dir, 'state-levels')}`);
    const r = await run(['run', '--config', file], { FIELDGATE_LOG_LEVELS: 'link=warn' });
    expect(r.code).toBe(78);
    expect(r.out).toBe('');
    expect(r.err).toContain('FIELDGATE_LOG_LEVELS: "link=warn": unknown component "link" (components: bus, poller, reporter, commands, cloud, health, reload, web)');
    expect(r.err).toContain('1 problem(s); nothing started');
  });

  it('run takes the same problems from the environment (FIELDGATE_STATE_DIR, FIELDGATE_CA_FILE)', async () => {
    const file = site('  logLevel: info');
    const r = await run(['run', '--config', file], { FIELDGATE_STATE_DIR: stateFile, FIELDGATE_CA_FILE: dir });
    expect(r.code).toBe(78);
    expect(r.err).toContain('gateway.stateDir: is a file, not a directory');
    expect(r.err).toContain('gateway.cloud.caFile: is a directory, not a PEM file');
  });

  it('validate never echoes the password of an env-set broker URL', async () => {
    const file = site('  logLevel: info');
    const r = await run(['validate', file], { FIELDGATE_MQTT_URL: 'http://gw:env-hunter2@broker', FIELDGATE_STATE_DIR: join(dir, 'state') });
    expect(r.code).toBe(78);
    expect(r.err).toContain('gateway.cloud.mqttUrl');
    expect(r.err).toContain('http://[redacted]@broker');
    expect(r.err).not.toContain('hunter2');
  });
});
