// The emulator's device channel: the scoped MQTT broker and TCP stream access, wired to the
// cloud state through the contract in ../channel.ts.
import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from 'fieldgate/workspace-kit';
import { defaultDevicePacketBound, type DeviceChannel, type DeviceChannelOptions } from '../channel.js';
import { ScopedBroker } from './broker.js';
import { Presence, type PresenceListener } from './presence.js';
import { TcpStreams } from './tcp-streams.js';
import { UplinkHandler } from './uplink.js';
import { DEFAULT_JSON_LIMITS } from '../json-limits.js';
import { listen } from '../listen.js';

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

function serve(handler: (socket: Socket) => void, log: Logger, what: string): Server {
  const server = createServer((socket) => {
    try {
      handler(socket);
    } catch (err) {
      log.error({ err, server: what }, 'connection setup failed');
      socket.destroy();
    }
  });
  server.on('error', (err) => log.error({ err, server: what }, 'server error'));
  return server;
}

export async function startDeviceChannel(options: DeviceChannelOptions, logger: Logger): Promise<DeviceChannel> {
  const log = logger.child({ component: 'device-channel' });
  const { events, directory } = options;
  const listener: PresenceListener = {
    onConnected(deviceId, via) {
      log.info({ deviceId, via }, 'device online');
      try {
        events.onConnected(deviceId, via);
      } catch (err) {
        log.error({ deviceId, via, err }, 'device online handler failed');
      }
    },
    onDisconnected(deviceId, via) {
      log.info({ deviceId, via }, 'device offline');
      try {
        events.onDisconnected(deviceId, via);
      } catch (err) {
        log.error({ deviceId, via, err }, 'device offline handler failed');
      }
    },
  };
  const mqttPresence = new Presence('mqtt', listener);
  const tcpPresence = new Presence('tcp', listener);

  let broker: ScopedBroker | undefined;
  const sendReply = (deviceId: string, topic: string, payload: Buffer): void => {
    broker?.publish(deviceId, topic, payload).catch((err: unknown) => {
      log.warn({ deviceId, topic, err }, 'device response not published');
    });
  };
  const uplinks = new UplinkHandler(events, sendReply, () => Date.now(), log, options.jsonLimits, options.gateways);
  const scoped = await ScopedBroker.start({
    directory,
    presence: mqttPresence,
    onUplink: (deviceId, uplink, payload) => uplinks.handle(deviceId, uplink, payload),
    maxPacketBytes: options.maxPacketBytes ?? defaultDevicePacketBound(options.jsonLimits ?? DEFAULT_JSON_LIMITS),
    log,
    ...(options.onForward ? { onForward: options.onForward } : {}),
  });
  broker = scoped;
  const streams = new TcpStreams({
    directory,
    presence: tcpPresence,
    onStreamData: (deviceId, data) => events.onStreamData(deviceId, undefined, data),
    registerTimeoutMs: Math.max(0, options.tcpRegisterTimeoutS) * 1000,
    log,
  });

  const mqttServer = serve((socket) => scoped.handleConnection(socket), log, 'mqtt');
  const tcpServer = serve((socket) => streams.handleConnection(socket), log, 'tcp stream');
  let mqttPort: number;
  let tcpPort: number;
  try {
    mqttPort = await listen(mqttServer, options.mqttPort, options.host, 'MQTT');
    tcpPort = await listen(tcpServer, options.tcpPort, options.host, 'TCP streams');
  } catch (err) {
    if (mqttServer.listening) await closeServer(mqttServer);
    await scoped.close();
    throw err;
  }
  log.info({ host: options.host, mqttPort, tcpPort }, 'device channel listening');

  let closing: Promise<void> | undefined;
  return {
    mqttPort,
    tcpPort,
    async publish(deviceId, topic, payload) {
      const online = mqttPresence.isOnline(deviceId);
      // Published even when offline: a persistent session (clean=false) gets it on reconnect.
      await scoped.publish(deviceId, topic, payload);
      return online;
    },
    sendTcp: (deviceId, data) => streams.send(deviceId, data),
    isOnline: (deviceId) => mqttPresence.isOnline(deviceId) || tcpPresence.isOnline(deviceId),
    stats: () => ({ packetsTooLarge: scoped.packetsTooLarge }),
    close() {
      closing ??= (async () => {
        const stopped = Promise.all([closeServer(mqttServer), closeServer(tcpServer)]);
        streams.close();
        await scoped.close();
        await stopped;
        log.info('device channel closed');
      })();
      return closing;
    },
  };
}
