// `fieldgate validate SITE` with captured output: exit 78 with every issue, 0 with read plans, 64 on misuse.
import { Writable } from 'node:stream';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runValidate } from '../../../src/cli/validate.js';
import type { CliIo } from '../../../src/cli/io.js';
import { makeTestCertificates } from '../../helpers/tls-certs.js';

const fixture = (path: string) => fileURLToPath(new URL(`../../fixtures/config/${path}`, import.meta.url));
const example = fileURLToPath(new URL('../../../config/site.example.yaml', import.meta.url));

/** A stream that records every write synchronously, so nothing is pending when the command returns. */
function recorder(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

function capture(env: NodeJS.ProcessEnv = {}): { io: CliIo; out: () => string; err: () => string } {
  const stdout = recorder();
  const stderr = recorder();
  return { io: { stdout: stdout.stream, stderr: stderr.stream, env }, out: stdout.text, err: stderr.text };
}

describe('runValidate', () => {
  it('prints every issue as "path: message" on stderr and exits 78', async () => {
    const { io, out, err } = capture();
    const code = await runValidate([fixture('invalid/many-errors.yaml')], io);
    expect(code).toBe(78);
    expect(out()).toBe('');
    const lines = err().trim().split('\n');
    expect(lines).toContain('devices[1].points[0].type: unknown type "f32" (expected bool, bit, int16, uint16, int32, uint32, int64, uint64, float32, float64, string)');
    expect(lines).toContain('devices[0].points[2].adress: unknown key (did you mean "address"?)');
    expect(lines).toContain('gateway.logLevel: must be one of fatal, error, warn, info, debug, trace, silent (got "chatty")');
    expect(lines.at(-1)).toBe(`${fixture('invalid/many-errors.yaml')}: 9 problems`);
  });

  it('prints each device read plan on success and exits 0', async () => {
    // full.json names /etc/fieldgate/ca.pem and /var/lib/fieldgate; validate checks both exist or can be made.
    const certs = makeTestCertificates();
    const { io, out, err } = capture({ FIELDGATE_CA_FILE: certs.caFile, FIELDGATE_STATE_DIR: join(certs.dir, 'state') });
    const code = await runValidate([fixture('valid/full.json')], io);
    expect(err()).toBe('');
    expect(code).toBe(0);
    expect(out().trim().split('\n')).toEqual([
      'site OK: 3 bus(es), 3 device(s), 7 point(s)',
      'press: 5 requests cover 12 registers for 5 points',
      'meter: 1 request covers 4 registers for 1 point',
      'heater: 1 request covers 1 bit for 1 point',
    ]);
  });

  it('accepts the documented example site', async () => {
    const { io, out } = capture({ FIELDGATE_ACCESS_KEY: 'example-access-key', FIELDGATE_SECRET_KEY: 'example-secret-key' });
    expect(await runValidate([example], io)).toBe(0);
    expect(out()).toContain('meter-main: 3 requests cover 12 registers for 6 points');
    expect(out()).toContain('boiler: 3 requests cover 5 registers for 4 points');
  });

  it('uses the environment it is given for gateway overrides', async () => {
    const { io, err } = capture({ FIELDGATE_HEALTH_PORT: 'not-a-port' });
    expect(await runValidate([fixture('valid/minimal.yaml')], io)).toBe(78);
    expect(err()).toContain('gateway.health.port: must be a port number 1..65535 (set by FIELDGATE_HEALTH_PORT)');
  });

  it('rejects unknown components in FIELDGATE_LOG_LEVELS with the list of valid ones, with the site file\'s issues', async () => {
    const { io, err } = capture({ FIELDGATE_LOG_LEVELS: 'link=warn,bus=debug,cloud=loud', FIELDGATE_HEALTH_PORT: 'not-a-port' });
    expect(await runValidate([fixture('valid/minimal.yaml')], io)).toBe(78);
    expect(err()).toContain('FIELDGATE_LOG_LEVELS: "link=warn": unknown component "link" (components: bus, poller, reporter, commands, cloud, health, reload, web)');
    expect(err()).toContain('FIELDGATE_LOG_LEVELS: "cloud=loud": unknown level "loud"');
    expect(err()).toContain('gateway.health.port: must be a port number');
    expect(err()).not.toContain('bus=debug');
  });

  it('accepts every component the example environment file names', async () => {
    const exampleEnv = readFileSync(fileURLToPath(new URL('../../../systemd/fieldgate.env.example', import.meta.url)), 'utf8');
    const named = /FIELDGATE_LOG_LEVELS=(\S+)/.exec(exampleEnv)?.[1];
    expect(named).toBeDefined();
    const { io, err } = capture({ FIELDGATE_LOG_LEVELS: named });
    expect(await runValidate([fixture('valid/minimal.yaml')], io)).toBe(0);
    expect(err()).toBe('');
  });

  it('reports a missing file as a config error', async () => {
    const { io, err } = capture();
    expect(await runValidate(['/nonexistent/site.yaml'], io)).toBe(78);
    expect(err()).toContain('/nonexistent/site.yaml: file not found');
  });

  it.each([[[]], [['a.yaml', 'b.yaml']], [['--bogus', 'a.yaml']]])('exits 64 on bad arguments %j', async (args) => {
    const { io, err } = capture();
    expect(await runValidate(args, io)).toBe(64);
    expect(err()).toContain('usage: fieldgate validate');
  });
});
