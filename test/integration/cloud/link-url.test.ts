// The link hands mqtt.js connection options, never the URL string: mqtt.js would read a string
// with Node's legacy url.parse(), which in the packaged bundle (mqtt.js inlined, outside
// node_modules) prints a DEP0169 DeprecationWarning to stderr at every start.
import url from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MqttLink } from '../../../src/cloud/mqtt/link.js';
import { silentLogger } from '../../../src/ops/log.js';
import { Mosquitto } from '../../helpers/mosquitto.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

describe('MqttLink and url.parse', () => {
  it('connects to mosquitto without calling url.parse', async () => {
    const mq = await Mosquitto.start();
    cleanups.push(() => mq.dispose());
    const parse = vi.spyOn(url, 'parse');
    const link = new MqttLink({
      name: 'pump', url: mq.url, credentials: async () => ({ clientId: 'dev-1', username: 'token', password: 'pk' }), streams: [],
      keepaliveS: 30, connectTimeoutMs: 5000, reconnect: { initialMs: 50, maxMs: 400, jitter: 0.2 }, log: silentLogger(),
    });
    cleanups.push(() => link.stop());
    link.start();
    await expect.poll(() => link.isUp, { timeout: 10_000 }).toBe(true);
    expect(parse).not.toHaveBeenCalled();
  });
});
