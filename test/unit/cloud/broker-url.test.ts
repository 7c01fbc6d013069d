// The broker URL read with WHATWG URL gives mqtt.js the same connection options it took from
// Node's legacy url.parse() (the oracle here), so the daemon never triggers DEP0169.
import { parse } from 'node:url';
import { describe, expect, it } from 'vitest';
import { brokerUrlOptions } from '../../../src/cloud/mqtt/broker-url.js';

/** What mqtt.js 5's connect() took from url.parse(url, true) (lib/connect/index.ts). */
function legacy(url: string): Record<string, unknown> {
  const p = parse(url, true);
  const protocol = (p.protocol ?? '').replace(/:$/, '');
  const auth = p.auth === null ? undefined : /^(.+):(.+)$/.exec(p.auth);
  return {
    protocol, host: p.hostname, hostname: p.hostname,
    ...(p.port === null ? {} : { port: Number(p.port) }),
    ...(protocol.startsWith('ws') ? { path: p.path } : {}),
    ...(p.auth === null ? {} : auth ? { username: auth[1], password: auth[2] } : { username: p.auth }),
  };
}

describe('brokerUrlOptions', () => {
  it.each([
    'mqtt://127.0.0.1:1883',
    'mqtt://broker.example.com',
    'mqtts://broker.example.com:8883',
    'mqtt://[::1]:1883',
    'mqtts://[2001:db8::5]:8883',
    'ws://127.0.0.1:8080/mqtt',
    'wss://broker.example.com/mqtt?x=1&y=2',
    'wss://broker.example.com',
    'mqtt://user:p%40ss@127.0.0.1:1883',
    'mqtt://onlyuser@127.0.0.1',
  ])('%s: the same options as url.parse gave mqtt.js', (url) => {
    expect({ ...brokerUrlOptions(url) }).toEqual(legacy(url));
  });

  it('refuses a scheme mqtt.js should not be given', () => {
    expect(() => brokerUrlOptions('http://127.0.0.1')).toThrow(/unsupported broker URL scheme "http"/);
    expect(() => brokerUrlOptions('not a url')).toThrow();
  });
});
