// MQTT 3.1.1 §3.3.5 with a real mqtt.js client: overlapping subscriptions deliver one copy at the
// maximum QoS of the matching subscriptions (aedes alone delivers whichever matched first).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectAsync, type MqttClient } from 'mqtt';
import { PROJECT_KEY, startHarness, waitFor, type Harness } from './channel-fixtures.js';

let harness: Harness;
let client: MqttClient | undefined;

interface Seen {
  topic: string;
  qos: number;
}

async function connect(): Promise<{ client: MqttClient; seen: Seen[] }> {
  const c = await connectAsync(harness.url, { username: 'tok-a', password: PROJECT_KEY, protocolVersion: 4, reconnectPeriod: 0, clientId: 'qos-test' });
  client = c;
  const seen: Seen[] = [];
  c.on('packetreceive', (packet) => {
    if (packet.cmd === 'publish') seen.push({ topic: packet.topic, qos: packet.qos });
  });
  return { client: c, seen };
}

beforeEach(async () => {
  harness = await startHarness();
});

afterEach(async () => {
  await client?.endAsync(true);
  client = undefined;
  await harness.channel.close();
});

describe('delivery QoS of overlapping subscriptions', () => {
  it.each([
    ['response QoS 1 then # QoS 0', [['attributes/response', 1], ['#', 0]], 1],
    ['# QoS 0 then response QoS 1', [['#', 0], ['attributes/response', 1]], 1],
    ['# QoS 1 then response QoS 0', [['#', 1], ['attributes/response', 0]], 1],
    ['+ QoS 0 and response QoS 1', [['+', 0], ['attributes/response', 1], ['attributes/+', 0]], 1],
    ['both QoS 0', [['attributes/response', 0], ['#', 0]], 0],
  ] as const)('%s: one copy at the maximum QoS', async (_name, subs, want) => {
    const { client: c, seen } = await connect();
    await c.subscribeAsync('attributes/get/response/+', { qos: 0 });
    // Separate SUBSCRIBE packets, in the order given: the broker's match order must not matter.
    for (const [topic, qos] of subs) await c.subscribeAsync(topic, { qos });
    for (let i = 0; i < 3; i += 1) await c.publishAsync('attributes', JSON.stringify({ n: i }), { qos: 1 });
    await waitFor(() => seen.filter((s) => s.topic === 'attributes/response').length >= 3, 'three answers');
    // A later message flushes any duplicate still on its way.
    await c.publishAsync('attributes/get/7', '{}', { qos: 1 });
    await waitFor(() => seen.some((s) => s.topic === 'attributes/get/response/7'), 'get answer');
    const answers = seen.filter((s) => s.topic === 'attributes/response');
    expect(answers).toEqual([{ topic: 'attributes/response', qos: want }, { topic: 'attributes/response', qos: want }, { topic: 'attributes/response', qos: want }]);
  });

  it('cloud pushes to a device with # at QoS 0 and attributes/push at QoS 1 arrive once at QoS 1', async () => {
    const { client: c, seen } = await connect();
    await c.subscribeAsync('#', { qos: 0 });
    await c.subscribeAsync('attributes/push', { qos: 1 });
    await c.subscribeAsync('command/send/+', { qos: 0 });
    await harness.channel.publish('dev-A', 'attributes/push', Buffer.from('{"a":1}'));
    await harness.channel.publish('dev-A', 'command/send/5', Buffer.from('{"method":"m","params":{},"id":5}'));
    await waitFor(() => seen.some((s) => s.topic === 'command/send/5'), 'command');
    expect(seen).toEqual([{ topic: 'attributes/push', qos: 1 }, { topic: 'command/send/5', qos: 0 }]);
  });
});
