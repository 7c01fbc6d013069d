// The gateway section: convict defaults, environment overrides, strictness and secrets kept out of messages.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { convictIssues, validateGateway } from '../../../src/core/config/schema.js';
import { formatIssue } from '../../../src/core/config/issues.js';
import { CLOUD_DEFAULTS } from './cloud-defaults.js';


describe('validateGateway', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('fills every default when the section is absent', () => {
    expect(validateGateway(undefined, {})).toEqual({
      gateway: { stateDir: './state', logLevel: 'info', health: { enabled: true, host: '127.0.0.1', port: 9180, eventLoopSampleMs: 1000, watchdogSlackMs: 30_000 }, cloud: CLOUD_DEFAULTS, profileDirs: ['/etc/fieldgate/profiles'] },
      issues: [],
    });
  });

  it('keeps configured cloud settings and leaves unset ones out', () => {
    const { gateway } = validateGateway({ cloud: { mqttUrl: 'mqtts://b.example:8883', appId: 'x', accessKey: '' } }, {});
    expect(gateway?.cloud).toEqual({ mqttUrl: 'mqtts://b.example:8883', appId: 'x', ...CLOUD_DEFAULTS });
  });

  it.each([
    ['FIELDGATE_STATE_DIR', '/var/lib/fg', (g: ReturnType<typeof validateGateway>['gateway']) => g?.stateDir, '/var/lib/fg'],
    ['LOG_LEVEL', 'debug', (g: ReturnType<typeof validateGateway>['gateway']) => g?.logLevel, 'debug'],
    ['FIELDGATE_HEALTH_PORT', '9300', (g: ReturnType<typeof validateGateway>['gateway']) => g?.health.port, 9300],
    ['FIELDGATE_PROJECT_KEY', 'pk-env', (g: ReturnType<typeof validateGateway>['gateway']) => g?.cloud.projectKey, 'pk-env'],
    ['FIELDGATE_SECRET_KEY', 'sk-env', (g: ReturnType<typeof validateGateway>['gateway']) => g?.cloud.secretKey, 'sk-env'],
    ['FIELDGATE_ACCESS_KEY', 'ak-env', (g: ReturnType<typeof validateGateway>['gateway']) => g?.cloud.accessKey, 'ak-env'],
    ['FIELDGATE_MQTT_URL', 'mqtt://10.1.1.1:1883', (g: ReturnType<typeof validateGateway>['gateway']) => g?.cloud.mqttUrl, 'mqtt://10.1.1.1:1883'],
    ['FIELDGATE_SYNC_PERIOD_MS', '5000', (g: ReturnType<typeof validateGateway>['gateway']) => g?.cloud.syncPeriodMs, 5000],
  ])('%s overrides the file', (name, value, pick, expected) => {
    const file = { stateDir: '/srv', logLevel: 'warn', health: { port: 9000 }, cloud: { projectKey: 'pk-file', secretKey: 'sk-file' } };
    const result = validateGateway(file, { [name]: value });
    expect(result.issues).toEqual([]);
    expect(pick(result.gateway)).toBe(expected);
  });

  it('reads only the environment it is given, never process.env', () => {
    vi.stubEnv('LOG_LEVEL', 'trace');
    vi.stubEnv('FIELDGATE_HEALTH_PORT', 'junk');
    expect(validateGateway({}, {}).gateway?.logLevel).toBe('info');
  });

  it('names the variable when an environment value is wrong', () => {
    expect(validateGateway({}, { FIELDGATE_HEALTH_PORT: '0', LOG_LEVEL: 'loud' }).issues.map(formatIssue)).toEqual([
      'gateway.logLevel: must be one of fatal, error, warn, info, debug, trace, silent (got "loud", set by LOG_LEVEL)',
      'gateway.health.port: must be a port number 1..65535 (set by FIELDGATE_HEALTH_PORT)',
    ]);
  });

  it('requires typed values in the file (no "no" that convict would turn into true)', () => {
    expect(validateGateway({ health: { enabled: 'no', port: '9000' } }, {}).issues.map(formatIssue)).toEqual([
      'gateway.health.enabled: must be true or false (got "no")',
      'gateway.health.port: must be a number (got "9000")',
    ]);
  });

  it.each([
    ['a duration', '5s', 5000, []],
    ['milliseconds', 250, 250, []],
    ['below the floor', 5, undefined, ['gateway.health.eventLoopSampleMs: must be a number 10..60000 (got 5)']],
    ['above the ceiling', '2h', undefined, ['gateway.health.eventLoopSampleMs: must be a number 10..60000 (got 7200000)']],
    ['not a duration', 'often', undefined, ['gateway.health.eventLoopSampleMs: must be a duration in ms or like "500ms", "2s", "10m", "1h" (got "often")']],
  ])('health.eventLoopSampleMs as %s', (_name, value, ms, issues) => {
    const result = validateGateway({ health: { eventLoopSampleMs: value } }, {});
    expect(result.issues.map(formatIssue)).toEqual(issues);
    if (ms !== undefined) expect(result.gateway?.health.eventLoopSampleMs).toBe(ms);
  });

  it.each([
    ['a duration', '3s', 3000, []],
    ['the longest', '1h', 3_600_000, []],
    ['below the floor', 999, undefined, ['gateway.health.watchdogSlackMs: must be a number 1000..3600000 (got 999)']],
    ['above the ceiling', '2h', undefined, ['gateway.health.watchdogSlackMs: must be a number 1000..3600000 (got 7200000)']],
    ['not a duration', 'soon', undefined, ['gateway.health.watchdogSlackMs: must be a duration in ms or like "500ms", "2s", "10m", "1h" (got "soon")']],
  ])('health.watchdogSlackMs as %s', (_name, value, ms, issues) => {
    const result = validateGateway({ health: { watchdogSlackMs: value } }, {});
    expect(result.issues.map(formatIssue)).toEqual(issues);
    if (ms !== undefined) expect(result.gateway?.health.watchdogSlackMs).toBe(ms);
  });

  it('never prints a sensitive value', () => {
    const secrets = ['hunter2-secret', 'pk-0123456789', 'ak-topsecret'];
    const result = validateGateway({
      cloud: { secretKey: { nested: secrets[0] }, projectKey: 123456789, accessKey: [secrets[2]], mqttUrl: 'nope' },
      surprise: secrets[1],
    }, {});
    const text = result.issues.map(formatIssue).join('\n');
    expect(result.issues.length).toBe(5);
    for (const secret of [...secrets, '123456789']) expect(text).not.toContain(secret);
    expect(text).toContain('gateway.cloud.mqttUrl: must be a URL starting with mqtt:// or mqtts:// or ws:// or wss:// (got "nope")');
  });

  it('rejects a gateway section that is not a mapping', () => {
    expect(validateGateway('fast', {}).issues).toEqual([{ path: 'gateway', message: 'must be a mapping (got "fast")' }]);
  });
});

describe('convictIssues', () => {
  it.each([
    ['health.port: must be a port number 1..65535: value was 70000', {}, 'gateway.health.port: must be a port number 1..65535 (got 70000)'],
    ['cloud.secretKey: must be a string', {}, 'gateway.cloud.secretKey: must be a string'],
    ["configuration param 'cloud.extra' not declared in the schema", {}, 'gateway.cloud.extra: unknown key'],
    ["configuration param 'health.port' missing from config, did you override its parent?", {}, 'gateway.health.port: missing from config, did you override its parent?'],
    ['stateDir: must be a non-empty string: value was ""', { FIELDGATE_STATE_DIR: '' }, 'gateway.stateDir: must be a non-empty string (got "", set by FIELDGATE_STATE_DIR)'],
    ['something odd', {}, 'gateway: something odd'],
  ])('%s', (line, env, expected) => {
    expect(convictIssues(line, env).map(formatIssue)).toEqual([expected]);
  });
});
