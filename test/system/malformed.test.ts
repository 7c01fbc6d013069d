// 1,000 malformed inbound payloads straight onto the device's topics (mosquitto: no cloud-side
// validation in between): no crash, polling goes on, and every command gets an error reply.
import mqtt from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/gateway.js';
import type { GatewayHandle } from '../../src/gateway-types.js';
import { silentLogger } from '../../src/log.js';
import { Mosquitto } from '../helpers/mosquitto.js';
import { meterDevice, startSite, waitFor, type Site } from './harness.js';

const PUSHES: Array<string | Buffer> = [
  'not json {', '[1,2,3]', 'null', '42', '"text"', '{"nope":1}', '{"setpoint":"hot"}', '{"pump":{"on":true}}',
  '{"setpoint":1e308}', '{"speed":-1}', '{"voltage":1}', Buffer.from([0xff, 0xfe, 0x00]),
];
const COMMANDS: string[] = [
  'not json {', '[]', '{"method":"set_speed","params":[1],"id":%ID%}', '{"method":"launch","params":{},"id":%ID%}',
  '{"method":"set_speed","params":{"rpm":"fast"},"id":%ID%}', '{"method":"set_speed","params":{},"id":%ID%}',
  '{"method":"write","params":{"voltage":3},"id":%ID%}', '{"method":"read","params":{"keys":"speed"},"id":%ID%}',
  '{"params":{},"id":%ID%}', '{"method":42,"id":%ID%}',
];

describe('malformed inbound payloads', () => {
  let site: Site | undefined;
  let broker: Mosquitto | undefined;
  let gateway: GatewayHandle | undefined;
  let client: mqtt.MqttClient | undefined;
  afterEach(async () => {
    await client?.endAsync();
    await gateway?.stop();
    await broker?.dispose();
    await site?.close();
  });

  it('survives 1,000 of them and answers every command with an error', async () => {
    site = await startSite();
    broker = await Mosquitto.start();
    const config = site.config([meterDevice('meter-1', 1, 'tok')], { mqttUrl: broker.url, apiBaseUrl: undefined, maxInboundBytes: 64 * 1024 });
    gateway = await startGateway(config, { logger: silentLogger(), env: {} });
    const g = gateway;
    await waitFor(() => (g.status().links[0]?.state === 'up' ? true : undefined));
    client = await mqtt.connectAsync(broker.url, { clientId: 'attacker' });
    const replies = new Map<string, { error?: { code: number } }>();
    const voltages: number[] = [];
    client.on('message', (topic, payload: Buffer) => {
      if (topic === 'attributes') {
        const report = JSON.parse(payload.toString()) as { voltage?: number };
        if (typeof report.voltage === 'number') voltages.push(report.voltage);
        return;
      }
      const body = JSON.parse(payload.toString()) as { params: { error?: { code: number } } };
      replies.set(topic.split('/').pop() ?? '', body.params);
    });
    await client.subscribeAsync(['command/reply/+', 'attributes'], { qos: 1 });
    const huge = Buffer.alloc(200 * 1024, 'x');
    // Separate counters per topic, so every variant of both lists is really sent.
    let pushes = 0;
    let commands = 0;
    let unanswerable = 0;
    for (let i = 0; i < 1000; i += 1) {
      if (i % 100 === 99) {
        await client.publishAsync('attributes/push', huge, { qos: 1 });
      } else if (i % 100 === 49) {
        commands += 1;
        await client.publishAsync(`command/send/${1000 + i}`, huge, { qos: 1 });
      } else if (i % 100 === 73) {
        // No usable id anywhere: nothing to answer, but it must not hurt either.
        unanswerable += 1;
        await client.publishAsync('command/send/not-a-number', '{"method":"read","params":{}}', { qos: 1 });
      } else if (i % 2 === 0) {
        await client.publishAsync('attributes/push', PUSHES[pushes % PUSHES.length], { qos: 1 });
        pushes += 1;
      } else {
        const id = 1000 + i;
        await client.publishAsync(`command/send/${id}`, COMMANDS[commands % COMMANDS.length].replaceAll('%ID%', String(id)), { qos: 1 });
        commands += 1;
      }
    }
    await waitFor(() => (replies.size >= commands ? true : undefined), 30_000);
    const errors = [...replies.values()].filter((p) => p.error !== undefined);
    console.log(`malformed: 1000 payloads (${pushes + 10} pushes, ${commands} commands with an id, ${unanswerable} without), ${replies.size} replies, ${errors.length} with an error`);
    expect(errors).toHaveLength(commands);
    expect(replies.has('not-a-number')).toBe(false);
    // Nothing was written by a bad push.
    const sim = site.sim.simulator;
    expect([sim.getRegister(1, 'holding', 0), sim.getRegister(1, 'holding', 1), sim.getRegister(1, 'input', 0)]).toEqual([215, 1450, 2301]);
    // Still polling and reporting: a fresh value travels device -> gateway -> broker.
    sim.setRegister(1, 'input', 0, 2345);
    await waitFor(() => (voltages.includes(234.5) ? true : undefined), 30_000);
    const lastPoll = g.status().devices[0].lastPollAgeMs;
    expect(lastPoll).not.toBeNull();
    expect(lastPoll ?? Infinity).toBeLessThan(5000);
    expect(g.status().links[0].state).toBe('up');
  }, 90_000);
});
