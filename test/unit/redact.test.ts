// Secrets inside free text: URL credentials and known values, in redact() and in every log line.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { configSecrets } from '../../src/core/config/secret-values.js';
import type { Config } from '../../src/core/config/config.js';
import { createLogger } from '../../src/ops/log.js';
import { redactUrlCredentials, SecretValues, urlSecrets } from '../../src/core/redact.js';

describe('redactUrlCredentials', () => {
  it.each([
    ['mqtt://user:hunter2@broker:1883', 'mqtt://[redacted]@broker:1883'],
    ['connect to MQTTS://u:p%40ss@host/x failed', 'connect to MQTTS://[redacted]@host/x failed'],
    ['wss://token@host', 'wss://[redacted]@host'],
    ['mqtt://u:p@ss@host:1883/x', 'mqtt://[redacted]@host:1883/x'],
    ['"url":"http://a:b@h","other":"https://c:d@i"', '"url":"http://[redacted]@h","other":"https://[redacted]@i"'],
    ['mqtt://broker:1883 and user@example.com', 'mqtt://broker:1883 and user@example.com'],
    ['no url at all', 'no url at all'],
  ])('%s', (text, expected) => {
    expect(redactUrlCredentials(text)).toBe(expected);
  });

  it('gives the parts of a URL to register as secrets', () => {
    // The user name beside a password is a name; alone it is the credential (a token as user).
    expect(urlSecrets('mqtt://fieldgate:p%40ssword1@h')).toEqual(['p%40ssword1', 'p@ssword1']);
    expect(urlSecrets('wss://tok%2Den-123456@h')).toEqual(['tok%2Den-123456', 'tok-en-123456']);
    expect(urlSecrets('mqtt://h')).toEqual([]);
    expect(urlSecrets(undefined)).toEqual([]);
  });
});

describe('SecretValues', () => {
  it('replaces every known value, the longest first, and ignores short ones', () => {
    const secrets = new SecretValues();
    secrets.add('tok-abcdef', 'tok-abcdef-longer', '12345', undefined, '');
    expect(secrets.redact('a tok-abcdef-longer b tok-abcdef c 12345')).toBe('a [redacted] b [redacted] c 12345');
  });

  it('treats regular-expression characters literally and matches the JSON-escaped form', () => {
    const secrets = new SecretValues();
    secrets.add('a.b*c(d)"e\\f');
    expect(secrets.redact('x a.b*c(d)"e\\f y')).toBe('x [redacted] y');
    expect(secrets.redact(JSON.stringify({ m: 'a.b*c(d)"e\\f' }))).toBe('{"m":"[redacted]"}');
    expect(secrets.redact('aXb*c(d)')).toBe('aXb*c(d)');
  });
});

describe('SecretValues hides secrets and nothing else', () => {
  // test:package's site: device N is named pkg-meter-N, its cloud id dev-pkg-meter-N, device 1's
  // key is its name, the others have a token pkg-meter-N-token.
  const secrets = new SecretValues();
  secrets.add('pkg-meter-2-token', 'short1', 'a.b-c9', 'project-key-0123456789abcdef');
  it.each([
    ['a name or id around a short secret stays', 'device pkg-meter-10 dev-pkg-meter-1 short12 xshort1 short1_x short1-2', 'device pkg-meter-10 dev-pkg-meter-1 short12 xshort1 short1_x short1-2'],
    ['a short secret standing alone goes', 'token short1 refused', 'token [redacted] refused'],
    ['a short secret in JSON, a URL path, a header, at the ends goes', '{"t":"short1"} /v1/short1/attributes Project-Key: short1, (short1). short1', '{"t":"[redacted]"} /v1/[redacted]/attributes Project-Key: [redacted], ([redacted]). [redacted]'],
    ['regex characters in a short secret are literal', 'a.b-c9 aXb-c9 a.b-c90', '[redacted] aXb-c9 a.b-c90'],
    ['a long secret goes anywhere, also inside a word', 'pkg-meter-2-token xpkg-meter-2-tokenx dev-pkg-meter-2 pkg-meter-2', '[redacted] x[redacted]x dev-pkg-meter-2 pkg-meter-2'],
    ['a long key inside a longer word goes', 'Project-Key=project-key-0123456789abcdef0', 'Project-Key=[redacted]0'],
    ['other devices\' names and ids stay', 'pkg-meter-1 pkg-meter-3-token dev-pkg-meter-10', 'pkg-meter-1 pkg-meter-3-token dev-pkg-meter-10'],
  ])('%s', (_what, text, expected) => {
    expect(secrets.redact(text)).toBe(expected);
  });

  it('keeps the program\'s name when the broker URL has user fieldgate and a password', () => {
    const values = new SecretValues();
    values.add(...urlSecrets('mqtt://fieldgate:hunter22@broker'));
    expect(values.redact('/var/lib/fieldgate/fieldgate.lock: fieldgate 0.1.0; password hunter22')).toBe('/var/lib/fieldgate/fieldgate.lock: fieldgate 0.1.0; password [redacted]');
  });
});

describe('configSecrets', () => {
  it('collects keys, tokens and URL passwords of the gateway and every device; not device keys (identifiers)', () => {
    const config = {
      gateway: { cloud: { projectKey: 'pk-123456', accessKey: 'ak-123456', secretKey: 'sk-123456', mqttUrl: 'mqtt://u:mqtt-pass@h', apiBaseUrl: 'https://h' } },
      site: { devices: [{ cloud: { accessToken: 'dev-token-1', deviceKey: 'dev-key-1' } }, { cloud: { projectKey: 'dev-pk-2' } }, {}] },
    } as unknown as Config;
    const secrets = configSecrets(config);
    expect(secrets).toEqual(expect.arrayContaining(['pk-123456', 'ak-123456', 'sk-123456', 'mqtt-pass', 'dev-token-1', 'dev-pk-2']));
    expect(secrets).not.toContain('dev-key-1');
    expect(secrets).not.toContain('u');
  });
});

describe('logger redaction of foreign text', () => {
  function capture() {
    const lines: string[] = [];
    const destination = new Writable({ write(chunk: Buffer, _enc, cb) { lines.push(...chunk.toString().trim().split('\n')); cb(); } });
    return { lines, destination };
  }

  it('removes a known token from a server error message, an error stack and any field', () => {
    const { lines, destination } = capture();
    const secrets = new SecretValues();
    const log = createLogger({ level: 'info', destination, secrets });
    secrets.add('tok-9f8e7d6c5b');
    const err = new Error('HTTP 400: invalid token tok-9f8e7d6c5b for device');
    log.error({ err, detail: 'echo: tok-9f8e7d6c5b', url: 'mqtt://gw:pw123456@broker' }, 'cloud request failed');
    const text = lines.join('\n');
    expect(text).not.toContain('tok-9f8e7d6c5b');
    expect(text).not.toContain('pw123456');
    expect(text).toContain('invalid token [redacted] for device');
    expect(JSON.parse(lines[0])).toMatchObject({ msg: 'cloud request failed', url: 'mqtt://[redacted]@broker' });
  });

  it('removes URL credentials even without a secret registry', () => {
    const { lines, destination } = capture();
    createLogger({ level: 'info', destination }).warn({ reason: 'connect mqtt://fieldgate:hunter2@10.0.0.1 refused' }, 'link down');
    expect(lines[0]).not.toContain('hunter2');
    expect(JSON.parse(lines[0]).reason).toBe('connect mqtt://[redacted]@10.0.0.1 refused');
  });
});

describe('redaction cost', () => {
  it('handles a long line of URL-like text with no credentials', () => {
    const text = `${'a.'.repeat(200_000)}://${'b'.repeat(100_000)}`;
    expect(redactUrlCredentials(text)).toBe(text);
  });
});
