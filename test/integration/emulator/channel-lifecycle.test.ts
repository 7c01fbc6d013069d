// Start and stop of the device channel: ports, errors, closing with live connections.
import { connect as tcpConnect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/ops/log.js';
import { startDeviceChannel } from '../../../packages/emulator/src/channel/index.js';
import {
  connectDevice, fakeDirectory, PROJECT_KEY, RecordingEvents, startHarness, waitFor,
} from './channel-fixtures.js';

describe('device channel lifecycle', () => {
  it('reports the ephemeral ports it got', async () => {
    const harness = await startHarness();
    expect(harness.channel.mqttPort).toBeGreaterThan(0);
    expect(harness.channel.tcpPort).toBeGreaterThan(0);
    expect(harness.channel.tcpPort).not.toBe(harness.channel.mqttPort);
    await harness.channel.close();
  });

  it('fails with a clear message when a port is taken, and leaves nothing listening', async () => {
    const harness = await startHarness();
    const options = {
      host: '127.0.0.1', mqttPort: 0, tcpPort: harness.channel.mqttPort, directory: fakeDirectory(),
      events: new RecordingEvents(), tcpRegisterTimeoutS: 10,
    };
    await expect(startDeviceChannel(options, silentLogger())).rejects.toThrow(/cannot listen for TCP streams on 127\.0\.0\.1:\d+: .*EADDRINUSE/);
    await harness.channel.close();
  });

  it('closes with live MQTT, TCP stream and idle connections, once, and reports devices offline', async () => {
    const harness = await startHarness();
    const device = await connectDevice(harness.url, 'tok-a');
    const mqttClosed = new Promise<void>((resolve) => device.client.once('close', () => resolve()));
    const stream = tcpConnect(harness.channel.tcpPort, '127.0.0.1');
    stream.on('error', () => undefined);
    const streamClosed = new Promise<void>((resolve) => stream.once('close', () => resolve()));
    stream.write(`${PROJECT_KEY}&tok-b`);
    const idle = tcpConnect(harness.channel.mqttPort, '127.0.0.1');
    idle.on('error', () => undefined);
    const idleClosed = new Promise<void>((resolve) => idle.once('close', () => resolve()));
    await waitFor(() => harness.channel.isOnline('dev-B'), 'tcp registered');

    await Promise.all([harness.channel.close(), harness.channel.close()]);
    await Promise.all([mqttClosed, streamClosed, idleClosed]);
    await device.client.endAsync(true);
    await waitFor(() => harness.events.of('disconnected').length === 2, 'offline events');
    expect(harness.events.of('disconnected').map((call) => `${call.deviceId} ${call.via}`).sort()).toEqual(['dev-A mqtt', 'dev-B tcp']);
  });
});
