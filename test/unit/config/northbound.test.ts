// Northbound parts of the site file: gateway.cloud settings (defaults, durations, environment),
// per-device cloud identities, commands and streams, and the cross-checks between them.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkConfig, loadConfig } from '../../../src/ops/site-file.js';
import { validateGateway } from '../../../src/core/config/schema.js';
import { validateSite } from '../../../src/core/config/site.js';
import type { CloudSettings, ConfigIssue, DeviceConfig } from '../../../src/core/config/site-types.js';
import { CLOUD_DEFAULTS } from './cloud-defaults.js';

const northbound = fileURLToPath(new URL('../../fixtures/config/valid/northbound.yaml', import.meta.url));
const TCP = { name: 'plc', kind: 'tcp', host: '127.0.0.1' };
const POINTS = [{ id: 'sp', table: 'holding', address: 0, writable: true, max: 100 }, { id: 'st', table: 'input', address: 0 }];
const A_KEYS = { FIELDGATE_ACCESS_KEY: 'ak-secret', FIELDGATE_SECRET_KEY: 'sk-secret' };

function cloud(raw: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): CloudSettings {
  const result = validateGateway({ cloud: raw }, env);
  expect(result.issues).toEqual([]);
  return result.gateway!.cloud;
}

function device(extra: Record<string, unknown>): DeviceConfig {
  const result = validateSite({ buses: [TCP, { name: 'l1', kind: 'rtu', path: '/dev/ttyS0' }], devices: [{ name: 'd', bus: 'plc', unitId: 1, points: POINTS, ...extra }] });
  expect(result.issues).toEqual([]);
  return result.site!.devices[0];
}

function siteIssues(extra: Record<string, unknown>): ConfigIssue[] {
  return validateSite({ buses: [TCP, { name: 'l1', kind: 'rtu', path: '/dev/ttyS0' }], devices: [{ name: 'd', bus: 'plc', unitId: 1, points: POINTS, ...extra }] }).issues;
}

describe('gateway.cloud defaults', () => {
  it.each(Object.entries(CLOUD_DEFAULTS))('%s defaults to %j', (key, value) => {
    expect(cloud({})[key as keyof CloudSettings]).toEqual(value);
  });

  it('leaves every unset string out', () => {
    const settings = cloud({});
    for (const key of ['mqttUrl', 'apiBaseUrl', 'projectKey', 'appId', 'accessKey', 'secretKey', 'caFile']) expect(settings).not.toHaveProperty(key);
  });
});

describe('gateway.cloud durations', () => {
  it.each<[Record<string, unknown>, (c: CloudSettings) => number, number]>([
    [{ syncPeriodMs: '10m' }, (c) => c.syncPeriodMs, 600_000],
    [{ syncPeriodMs: '1h' }, (c) => c.syncPeriodMs, 3_600_000],
    [{ syncPeriodMs: 0 }, (c) => c.syncPeriodMs, 0],
    [{ reconnect: { initialMs: '2s' } }, (c) => c.reconnect.initialMs, 2000],
    [{ reconnect: { maxMs: '5m' } }, (c) => c.reconnect.maxMs, 300_000],
    [{ outbox: { commitIntervalMs: '20ms' } }, (c) => c.outbox.commitIntervalMs, 20],
  ])('%j', (raw, pick, ms) => {
    expect(pick(cloud(raw))).toBe(ms);
  });

  it.each<[Record<string, unknown>, ConfigIssue]>([
    [{ syncPeriodMs: 'ten minutes' }, { path: 'gateway.cloud.syncPeriodMs', message: 'must be a duration in ms or like "500ms", "2s", "10m", "1h" (got "ten minutes")' }],
    [{ syncPeriodMs: '2d' }, { path: 'gateway.cloud.syncPeriodMs', message: 'must be a duration in ms or like "500ms", "2s", "10m", "1h" (got "2d")' }],
    [{ reconnect: { maxMs: '2h' } }, { path: 'gateway.cloud.reconnect.maxMs', message: 'must be a number 10..3600000 (got 7200000)' }],
    [{ keepaliveS: '2m' }, { path: 'gateway.cloud.keepaliveS', message: 'must be a number (got "2m")' }],
  ])('rejects %j', (raw, issue) => {
    expect(validateGateway({ cloud: raw }, {}).issues).toEqual([issue]);
  });
});

describe('gateway.cloud environment overrides', () => {
  it.each<[string, string, (c: CloudSettings) => unknown, unknown]>([
    ['FIELDGATE_MQTT_URL', 'mqtts://broker:8883', (c) => c.mqttUrl, 'mqtts://broker:8883'],
    ['FIELDGATE_API_BASE_URL', 'https://api', (c) => c.apiBaseUrl, 'https://api'],
    ['FIELDGATE_APP_ID', 'app-9', (c) => c.appId, 'app-9'],
    ['FIELDGATE_ACCESS_KEY', 'ak', (c) => c.accessKey, 'ak'],
    ['FIELDGATE_SECRET_KEY', 'sk', (c) => c.secretKey, 'sk'],
    ['FIELDGATE_PROJECT_KEY', 'pk', (c) => c.projectKey, 'pk'],
    ['FIELDGATE_CA_FILE', '/etc/ca.pem', (c) => c.caFile, '/etc/ca.pem'],
    ['FIELDGATE_SYNC_PERIOD_MS', '10m', (c) => c.syncPeriodMs, 600_000],
    ['FIELDGATE_SYNC_PERIOD_MS', '30000', (c) => c.syncPeriodMs, 30_000],
    ['FIELDGATE_RECONNECT_INITIAL_MS', '250ms', (c) => c.reconnect.initialMs, 250],
    ['FIELDGATE_RECONNECT_MAX_MS', '2m', (c) => c.reconnect.maxMs, 120_000],
    ['FIELDGATE_OUTBOX_MAX_BYTES', '1048576', (c) => c.outbox.maxBytes, 1_048_576],
  ])('%s=%s', (name, value, pick, expected) => {
    expect(pick(cloud({ mqttUrl: 'mqtt://file:1883', syncPeriodMs: '1m' }, { [name]: value }))).toEqual(expected);
  });

  it('names the variable of a bad duration', () => {
    expect(validateGateway({}, { FIELDGATE_SYNC_PERIOD_MS: 'soon' }).issues).toEqual([
      { path: 'gateway.cloud.syncPeriodMs', message: 'must be a duration in ms or like "500ms", "2s", "10m", "1h" (got "soon", set by FIELDGATE_SYNC_PERIOD_MS)' },
    ]);
  });
});

describe('device cloud, commands and streams: normalised', () => {
  it('has no cloud and empty commands and streams when left out', () => {
    const d = device({});
    expect(d).not.toHaveProperty('cloud');
    expect(d.commands).toEqual([]);
    expect(d.streams).toEqual([]);
  });

  it.each<[Record<string, unknown>, unknown]>([
    [{ accessToken: 't' }, { accessToken: 't', allowCreate: false }],
    [{ deviceId: 'id', projectKey: 'pk' }, { deviceId: 'id', projectKey: 'pk', allowCreate: false }],
    [{ deviceKey: 'k', typeKey: 'tk', allowCreate: true }, { deviceKey: 'k', typeKey: 'tk', allowCreate: true }],
  ])('cloud %j', (raw, expected) => {
    expect(device({ cloud: raw }).cloud).toEqual(expected);
  });

  it.each<[unknown, unknown]>([
    [{ write: 'sp', value: 5 }, { kind: 'write', point: 'sp', value: 5 }],
    [{ write: 'sp', param: 'x' }, { kind: 'write', point: 'sp', param: 'x' }],
    [{ read: 'st' }, { kind: 'read', points: ['st'] }],
    [{ read: ['st', 'sp'] }, { kind: 'read', points: ['st', 'sp'] }],
    [{ delay: '1.5s' }, { kind: 'delay', ms: 1500 }],
    [{ delay: 0 }, { kind: 'delay', ms: 0 }],
    [{ pulse: 'sp', param: 'x', for: '500ms', restore: 0 }, { kind: 'pulse', point: 'sp', param: 'x', ms: 500, restore: 0 }],
  ])('step %j', (step, expected) => {
    expect(device({ commands: { go: { params: ['x'], steps: [step] } } }).commands).toEqual([{ method: 'go', requiredParams: ['x'], steps: [expected] }]);
  });

  it.each<[Record<string, unknown>, unknown]>([
    [{ tcp: '10.0.0.1:4001' }, { kind: 'tcp', host: '10.0.0.1', port: 4001 }],
    [{ tcp: { host: 'gw.local', port: 23 } }, { kind: 'tcp', host: 'gw.local', port: 23 }],
    [{ bus: 'l1' }, { kind: 'bus', bus: 'l1' }],
    [{ serial: { path: '/dev/ttyS1' } }, { kind: 'serial', path: '/dev/ttyS1', baudRate: 9600, parity: 'none', dataBits: 8, stopBits: 1 }],
  ])('stream target %j with default timing', (raw, target) => {
    expect(device({ streams: { s1: raw } }).streams).toEqual([{ identifier: 's1', target, quietMs: 50, replyTimeoutMs: 1000, maxReplyBytes: 4096 }]);
  });

  it('loads the northbound fixture', () => {
    const config = loadConfig(northbound, A_KEYS);
    expect(config.gateway.cloud).toMatchObject({ syncPeriodMs: 600_000, reconnect: { initialMs: 2000, maxMs: 120_000, jitter: 0.3 }, outbox: { commitIntervalMs: 100 } });
    const [pump, meter, plain] = config.site.devices;
    expect(pump.cloud).toEqual({ accessToken: 'pump-token', projectKey: 'pk-1', allowCreate: false });
    expect(pump.commands.map((c) => [c.method, c.requiredParams, c.steps.map((s) => s.kind)])).toEqual([
      ['start', ['rpm'], ['write', 'pulse', 'delay', 'read']],
      ['stop', [], ['write', 'read']],
      ['valve.close-all_2', [], ['delay']],
    ]);
    expect(pump.commands[0].steps[1]).toEqual({ kind: 'pulse', point: 'running', value: true, ms: 500, restore: false });
    expect(pump.streams.map((s) => [s.identifier, s.target.kind, s.quietMs, s.replyTimeoutMs, s.maxReplyBytes])).toEqual([
      ['console', 'tcp', 50, 1000, 4096],
      ['panel', 'tcp', 20, 2000, 512],
      ['rs485', 'bus', 50, 1000, 4096],
      ['scanner', 'serial', 50, 1000, 4096],
    ]);
    expect(pump.streams[3].target).toEqual({ kind: 'serial', path: '/dev/ttyUSB1', baudRate: 19200, parity: 'even', dataBits: 7, stopBits: 2 });
    expect(meter.cloud).toEqual({ deviceId: 'dev-meter', deviceKey: 'meter-2', typeKey: 'meter-type', allowCreate: true });
    expect(plain).not.toHaveProperty('cloud');
  });
});

describe('secrets in messages', () => {
  it.each(['accessToken', 'projectKey'])('never echoes a bad %s', (key) => {
    const issues = siteIssues({ cloud: { deviceId: 'x', [key]: 987654321 } });
    expect(issues).toEqual([{ path: `devices[0].cloud.${key}`, message: 'must be a non-empty string' }]);
    expect(JSON.stringify(issues)).not.toContain('987654321');
  });
});

describe('cloud cross-checks', () => {
  const base = { mqttUrl: 'mqtt://127.0.0.1:1883' };
  const full = { ...base, apiBaseUrl: 'http://127.0.0.1:8080', appId: 'app' };
  function cross(deviceCloud: Record<string, unknown>, gatewayCloud: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): string[] {
    const raw = { gateway: { cloud: gatewayCloud }, buses: [TCP], devices: [{ name: 'd', bus: 'plc', unitId: 1, points: POINTS, cloud: deviceCloud }] };
    const result = checkConfig(raw, env);
    const text = JSON.stringify(result.issues);
    for (const secret of ['ak-secret', 'sk-secret', 'tok-secret', 'pk-secret']) expect(text).not.toContain(secret);
    return result.issues.map((i) => `${i.path}: ${i.message}`);
  }

  it.each<[string, Record<string, unknown>, Record<string, unknown>, NodeJS.ProcessEnv, string[]]>([
    ['token + device project key', { accessToken: 'tok-secret', projectKey: 'pk-secret' }, base, {}, []],
    ['token + gateway project key from env', { accessToken: 'tok-secret' }, base, { FIELDGATE_PROJECT_KEY: 'pk-secret' }, []],
    ['token without project key', { accessToken: 'tok-secret' }, base, {}, ['devices[0].cloud: an accessToken needs a projectKey here or gateway.cloud.projectKey (FIELDGATE_PROJECT_KEY)']],
    ['no broker', { accessToken: 'tok-secret', projectKey: 'pk-secret' }, {}, {}, ['gateway.cloud.mqttUrl: required (FIELDGATE_MQTT_URL): 1 device(s) have a cloud block']],
    ['broker from env', { accessToken: 'tok-secret', projectKey: 'pk-secret' }, {}, { FIELDGATE_MQTT_URL: 'mqtt://b:1883' }, []],
    ['deviceId with every A key', { deviceId: 'id' }, full, A_KEYS, []],
    ['deviceId without secrets', { deviceId: 'id' }, full, {}, ['devices[0].cloud: a deviceId (interface A) needs gateway.cloud.accessKey (FIELDGATE_ACCESS_KEY), gateway.cloud.secretKey (FIELDGATE_SECRET_KEY)']],
    ['deviceId without app id', { deviceId: 'id' }, { ...full, appId: undefined }, A_KEYS, ['devices[0].cloud: a deviceId (interface A) needs gateway.cloud.appId (FIELDGATE_APP_ID)']],
    ['allowCreate without API', { deviceKey: 'k', allowCreate: true }, base, A_KEYS, ['devices[0].cloud: allowCreate (interface A) needs gateway.cloud.apiBaseUrl (FIELDGATE_API_BASE_URL), gateway.cloud.appId (FIELDGATE_APP_ID)']],
    ['deviceKey with API and project key', { deviceKey: 'k', typeKey: 't', projectKey: 'pk-secret' }, { ...base, apiBaseUrl: 'http://a' }, {}, []],
    ['deviceKey without project key', { deviceKey: 'k' }, { ...base, apiBaseUrl: 'http://a' }, {}, ['devices[0].cloud: a deviceKey alone (device certificate) needs a projectKey here or gateway.cloud.projectKey (FIELDGATE_PROJECT_KEY)']],
    ['deviceKey without API', { deviceKey: 'k' }, base, { FIELDGATE_PROJECT_KEY: 'pk-secret' }, ['devices[0].cloud: a deviceKey alone (device certificate) needs gateway.cloud.apiBaseUrl (FIELDGATE_API_BASE_URL)']],
  ])('%s', (_name, deviceCloud, gatewayCloud, env, expected) => {
    const clean = Object.fromEntries(Object.entries(gatewayCloud).filter(([, v]) => v !== undefined));
    expect(cross(deviceCloud, clean, env)).toEqual(expected);
  });
});
