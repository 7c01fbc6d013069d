// The device broker's bound on an incoming MQTT packet (aedes has none): a header announcing more
// than mqttMaxPacketBytes closes the connection before its body is buffered, whether the sender
// is logged in or not, and is counted in the status route; a flood of such connections leaves
// well-behaved devices reporting.
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { STATUS_PATH, startEmulator, type Emulator } from '../../../packages/emulator/src/index.js';
import { parseSeed } from '../../../packages/emulator/src/state/seed.js';
import { silentLogger } from '../../../src/ops/log.js';
import { FLOOD_CAP_BYTES, floodUntilClosed, HUGE_LENGTH, rawConnectPacket } from '../../helpers/mqtt-flood.js';
import { waitFor } from '../../system/harness.js';
import { connectDevice, type Device } from './channel-fixtures.js';
import { PROJECT_KEY, SEED_PATH } from './helpers.js';

const JSON_MAX = 32 * 1024;
const PACKET_MAX = 64 * 1024;

async function start(): Promise<Emulator> {
  const seed = parseSeed(readFileSync(SEED_PATH, 'utf8'), Date.now());
  return startEmulator({
    httpPort: 0, mqttPort: 0, tcpPort: 0, host: '127.0.0.1', seed, logger: silentLogger(),
    jsonLimits: { maxBytes: JSON_MAX }, mqttMaxPacketBytes: PACKET_MAX,
  });
}

// Tests read arbitrary status fields.
async function status(emu: Emulator): Promise<Record<string, any>> {
  return (await fetch(`http://127.0.0.1:${emu.httpPort}${STATUS_PATH}`)).json() as Promise<Record<string, any>>;
}

describe('device broker MQTT packet bound', () => {
  let emu: Emulator | undefined;
  const devices: Device[] = [];
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const d of devices.splice(0)) d.client.end(true);
    for (const s of sockets.splice(0)) s.destroy();
    await emu?.close();
    emu = undefined;
  });

  it('closes an unauthenticated connection whose CONNECT announces 256 MiB, and shows it in the status', async () => {
    emu = await start();
    const written = await floodUntilClosed(emu.mqttPort, Buffer.from([0x10, ...HUGE_LENGTH]), sockets);
    expect(written).toBeLessThan(FLOOD_CAP_BYTES);
    expect((await status(emu)).device_channel).toEqual({ packetsTooLarge: 1 });
  }, 60_000);

  it('takes a raw data publish at the bound, closes a device one byte over, and the device goes offline', async () => {
    emu = await start();
    const e = emu;
    const device = await connectDevice(`mqtt://127.0.0.1:${e.mqttPort}`, 'demo-meter-1-token', { password: PROJECT_KEY });
    devices.push(device);
    const topic = 'data/serial_raw';
    const atBound = Buffer.alloc(PACKET_MAX - 2 - topic.length - 2, 0x01); // QoS 1: topic length, topic, packet id
    await device.client.publishAsync(topic, atBound, { qos: 1 });
    expect(e.state.isOnline('dev-meter-1')).toBe(true);
    const closed = new Promise<void>((resolve) => device.client.once('close', () => resolve()));
    device.client.publish(topic, Buffer.alloc(atBound.length + 1, 0x01), { qos: 1 });
    await closed;
    await waitFor(async () => ((await status(e)).device_channel.packetsTooLarge === 1 ? true : undefined));
    await waitFor(() => (e.state.isOnline('dev-meter-1') ? undefined : true));
  }, 60_000);

  it('a flood of 30 oversized connections (half logged in) is refused one by one; a device keeps reporting', async () => {
    emu = await start();
    const e = emu;
    const device = await connectDevice(`mqtt://127.0.0.1:${e.mqttPort}`, 'demo-meter-2-token', { password: PROJECT_KEY });
    devices.push(device);
    await Promise.all(Array.from({ length: 30 }, (_, i) => floodUntilClosed(e.mqttPort,
      i % 2 === 0 ? Buffer.from([0x10, ...HUGE_LENGTH]) : Buffer.concat([rawConnectPacket('demo-meter-3-token', PROJECT_KEY), Buffer.from([0x30, ...HUGE_LENGTH])]), sockets)));
    await waitFor(async () => ((await status(e)).device_channel.packetsTooLarge === 30 ? true : undefined));
    await device.client.publishAsync('attributes', JSON.stringify({ voltage: 229.25 }), { qos: 1 });
    await waitFor(() => (e.state.devices.get('dev-meter-2')?.attributes.get('voltage')?.value === 229.25 ? true : undefined));
  }, 120_000);

  it('refuses a bound that leaves no room for the JSON bound', async () => {
    const seed = parseSeed(readFileSync(SEED_PATH, 'utf8'), Date.now());
    await expect(startEmulator({
      httpPort: 0, mqttPort: 0, tcpPort: 0, seed, logger: silentLogger(), jsonLimits: { maxBytes: JSON_MAX }, mqttMaxPacketBytes: JSON_MAX,
    })).rejects.toThrow(/--mqtt-max-packet-bytes/);
  });
});
