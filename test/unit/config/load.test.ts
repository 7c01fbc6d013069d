// loadConfig: files (YAML, JSON), frozen results, file-level problems as issues.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { checkConfig, ConfigError, loadConfig, parseSiteText } from '../../../src/ops/site-file.js';
import type { ConfigIssue } from '../../../src/core/config/site-types.js';
import { CLOUD_DEFAULTS } from './cloud-defaults.js';

const fixture = (path: string) => fileURLToPath(new URL(`../../fixtures/config/${path}`, import.meta.url));
const example = fileURLToPath(new URL('../../../config/site.example.yaml', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'fieldgate-config-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function issuesOf(load: () => unknown): readonly ConfigIssue[] {
  try {
    load();
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

/** line-plc in the example gets its credential through interface A, whose keys live in the environment. */
const EXAMPLE_ENV = { FIELDGATE_ACCESS_KEY: 'example-access-key', FIELDGATE_SECRET_KEY: 'example-secret-key' };

const MINIMAL_YAML = 'buses:\n  - { name: plc, kind: tcp, host: 127.0.0.1 }\ndevices: []\n';

describe('loadConfig', () => {
  it('loads the documented example site', () => {
    const config = loadConfig(example, EXAMPLE_ENV);
    expect(config.site.buses.map((bus) => `${bus.name}:${bus.kind}`)).toEqual(['meters:rtu', 'plc:tcp', 'boiler-room:rtu-over-tcp']);
    expect(config.site.devices.map((device) => device.name)).toEqual(['meter-main', 'meter-pv', 'line-plc', 'boiler']);
    expect(config.gateway.cloud).toMatchObject({ mqttUrl: 'mqtts://mqtt.example-cloud.net:8883', apiBaseUrl: 'https://api.example-cloud.net', appId: 'site-42', keepaliveS: 120 });
  });

  it('asks for the interface-A keys of the example when the environment lacks them', () => {
    expect(issuesOf(() => loadConfig(example, {}))).toEqual([{
      path: 'devices[2].cloud',
      message: 'a deviceId (interface A) needs gateway.cloud.accessKey (FIELDGATE_ACCESS_KEY), gateway.cloud.secretKey (FIELDGATE_SECRET_KEY)',
    }]);
  });

  it('returns a deeply frozen config', () => {
    const config = loadConfig(fixture('valid/full.json'), {});
    const point = config.site.devices[0].points[0];
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.gateway.health)).toBe(true);
    expect(Object.isFrozen(point.report)).toBe(true);
    expect(() => {
      (point as { address: number }).address = 9;
    }).toThrow(TypeError);
  });

  it('loads JSON with every key set', () => {
    const config = loadConfig(fixture('valid/full.json'), {});
    expect(config.gateway).toEqual({
      stateDir: '/var/lib/fieldgate', logLevel: 'debug', health: { enabled: false, host: '127.0.0.1', port: 9999, eventLoopSampleMs: 2000, watchdogSlackMs: 45_000 },
      cloud: { mqttUrl: 'mqtt://127.0.0.1:1883', apiBaseUrl: 'http://127.0.0.1:8080', appId: 'app-1', caFile: '/etc/fieldgate/ca.pem', ...CLOUD_DEFAULTS },
      profileDirs: ['/etc/fieldgate/profiles'],
    });
    expect(config.site.buses[0]).toMatchObject({ parity: 'none', stopBits: 2, timeoutMs: 300, interFrameDelayMs: 3, reconnect: { initialMs: 1000, maxMs: 60000, jitter: 0 } });
    expect(config.site.devices[0].points.map((p) => p.id)).toEqual(['speed', 'count', 'label', 'run', 'temp_c']);
    expect(config.site.devices[0].points[1]).toMatchObject({ wordOrder: 'big', byteOrder: 'big', report: { mode: 'change', deadband: 5, deadbandKind: 'percent', maxSilenceMs: 30000 } });
  });

  it('resolves YAML anchors and merge keys', () => {
    const config = loadConfig(fixture('valid/anchors.yaml'), {});
    expect(config.site.buses.map((bus) => (bus.kind === 'rtu' ? [bus.baudRate, bus.parity] : []))).toEqual([[19200, 'even'], [38400, 'even']]);
    expect(config.site.devices[1].points.map((p) => p.id)).toEqual(['voltage', 'current']);
  });

  it('reads JSON by content when the extension says nothing', () => {
    const file = join(scratch, 'site.conf');
    writeFileSync(file, JSON.stringify({ buses: [{ name: 'plc', kind: 'tcp', host: '127.0.0.1' }], devices: [] }));
    expect(loadConfig(file, {}).site.buses[0].name).toBe('plc');
  });

  it('applies the environment to the gateway section', () => {
    const file = join(scratch, 'env.yaml');
    writeFileSync(file, MINIMAL_YAML);
    expect(loadConfig(file, { FIELDGATE_STATE_DIR: '/tmp/fg-state' }).gateway.stateDir).toBe('/tmp/fg-state');
  });

  it.each([
    ['a missing file', () => join(scratch, 'nope.yaml'), 'file not found'],
    ['a directory', () => scratch, 'is a directory, not a site file'],
  ])('reports %s as an issue', (_what, path, message) => {
    expect(issuesOf(() => loadConfig(path(), {}))).toEqual([{ path: path(), message }]);
  });

  it('puts every issue in the ConfigError message', () => {
    const err = (() => {
      try {
        loadConfig(fixture('invalid/unknown-bus.yaml'), {});
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect(err?.message).toBe('invalid configuration (2 problems):\ndevices[0].bus: unknown bus "line2" (did you mean "line1"?)\ndevices[1].bus: unknown bus "nowhere"');
  });
});

describe('parseSiteText', () => {
  it.each([
    ['site.yaml', 'a: [1, 2', /^site\.yaml:1:\d+$/, /^YAML syntax error: /],
    ['site.yaml', 'a: 1\na: 2\n', /^site\.yaml:2:1$/, /^YAML syntax error: Map keys must be unique/],
    ['site.json', '{\n  "a": 1\n  "b": 2\n}', /^site\.json:3:3$/, /^JSON syntax error: Expected ',' or '}' after property value$/],
    ['site.json', '{"a": [1,]}', /^site\.json:1:9$/, /^JSON syntax error: trailing comma$/],
    ['site.json', '', /^site\.json$/, /^JSON syntax error: Unexpected end of JSON input$/],
  ])('%s %j', (file, text, path, message) => {
    const { issues } = parseSiteText(text, file);
    expect(issues.length).toBeGreaterThan(0);
    expect(issues[0].path).toMatch(path);
    expect(issues[0].message).toMatch(message);
  });

  it('treats an empty YAML file as an empty site', () => {
    expect(parseSiteText('# nothing\n', 'a.yaml')).toEqual({ raw: null, issues: [] });
    expect(checkConfig(null, {}).issues).toEqual([
      { path: 'buses', message: 'required (a list)' },
      { path: 'devices', message: 'required (a list)' },
    ]);
  });

  it('keeps every YAML value as written when it copies the strings off the file text', () => {
    const text = ['name: "plant \\uD800 \\u00e9 \\U0001F600"', 'list: &l [a, "b c", 3, true, null]', 'again: *l', 'nested: { __proto__: tag, "x": { y: [deep] } }', ''].join('\n');
    const { raw, issues } = parseSiteText(text, 'site.yaml');
    expect(issues).toEqual([]);
    const site = raw as Record<string, unknown>;
    expect(site.name).toBe('plant \uD800 \u00e9 \u{1F600}');
    expect(site.list).toEqual(['a', 'b c', 3, true, null]);
    expect(site.again).toEqual(site.list);
    const nested = site.nested as Record<string, unknown>;
    // An own "__proto__" key stays a value; the object's prototype is untouched.
    expect(Object.getOwnPropertyDescriptor(nested, '__proto__')?.value).toBe('tag');
    expect(Object.getPrototypeOf(nested)).toBe(Object.prototype);
    expect(nested.x).toEqual({ y: ['deep'] });
  });

  it('refuses alias bombs', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]', 'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]', 'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]', 'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]', 'e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]'].join('\n');
    const { issues } = parseSiteText(bomb, 'bomb.yaml');
    expect(issues).toHaveLength(1);
    expect(issues[0].message).toMatch(/^YAML error: /);
  });
});
