// The device channel against independent clients: mosquitto_sub / mosquitto_pub processes.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PROJECT_KEY, startHarness, waitFor, type Harness } from './channel-fixtures.js';
import { messages, MosquittoClients } from './mosquitto-clients.js';

let harness: Harness;
const clients = new MosquittoClients(() => harness.channel.mqttPort, PROJECT_KEY);
const run = (command: string, args: string[]) => clients.run(command, args);
const subscribe = (token: string, topics: string[]) => clients.subscribe(token, topics);
const publish = (token: string, topic: string, message: string) => clients.publish(token, topic, message);

beforeEach(async () => {
  harness = await startHarness();
});

afterEach(async () => {
  await clients.stopAll();
  await harness.channel.close();
});

describe('mosquitto clients', () => {
  it('mosquitto_pub reports attributes as device B while mosquitto_sub as device A hears nothing of it', async () => {
    const a = await subscribe('tok-a', ['#', 'attributes', '+/+']);
    const pub = await publish('tok-b', 'attributes', '{"humidity":40}');
    expect(pub.exitCode()).toBe(0);
    await waitFor(() => harness.events.of('report').length === 1, 'report');
    expect(harness.events.of('report')[0]).toMatchObject({ deviceId: 'dev-B', attributes: { humidity: 40 } });

    // Something A must hear proves its subscription is live before checking it heard nothing else.
    await harness.channel.publish('dev-B', 'attributes/push', Buffer.from('{"for":"B"}'));
    await harness.channel.publish('dev-A', 'attributes/push', Buffer.from('{"for":"A"}'));
    await waitFor(() => messages(a).length > 0, 'push to A');
    expect(messages(a)).toEqual(['attributes/push {"for":"A"}']);
  });

  it('mosquitto_sub receives command/send/<id> un-prefixed', async () => {
    const a = await subscribe('tok-a', ['command/send/+']);
    expect(await harness.channel.publish('dev-A', 'command/send/1000', Buffer.from('{"method":"reset","params":{},"id":1000}'))).toBe(true);
    await waitFor(() => messages(a).length === 1, 'command');
    expect(messages(a)).toEqual(['command/send/1000 {"method":"reset","params":{},"id":1000}']);
  });

  it('mosquitto_pub with a wrong project key is refused', async () => {
    const pub = run('mosquitto_pub', [
      '-h', '127.0.0.1', '-p', String(harness.channel.mqttPort), '-V', 'mqttv311', '-u', 'tok-a', '-P', 'wrong', '-t', 'attributes', '-m', '{}',
    ]);
    await waitFor(() => pub.exitCode() !== undefined, 'mosquitto_pub exit');
    expect(pub.exitCode()).not.toBe(0);
    expect(pub.stderr()).toMatch(/not authori[sz]ed/i);
    expect(harness.events.calls).toEqual([]);
  });

  it('a mosquitto_pub of the same device kicks the running mosquitto_sub, which reconnects', async () => {
    const sub = await subscribe('tok-a', ['attributes/push']);
    const connects = () => sub.lines.filter((line) => line.includes('sending CONNECT')).length;
    expect(connects()).toBe(1);
    const pub = await publish('tok-a', 'attributes', '{"kick":1}');
    expect(pub.exitCode()).toBe(0);
    // libmosquitto reconnects on its own once kicked: a second CONNECT proves the kick.
    await waitFor(() => connects() >= 2, 'mosquitto_sub reconnect after the kick');
    expect(harness.events.of('report')).toMatchObject([{ deviceId: 'dev-A', attributes: { kick: 1 } }]);
  });
});
