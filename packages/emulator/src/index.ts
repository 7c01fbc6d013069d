// startEmulator: the local device cloud (HTTP interfaces A and B + the device channel) in one call.
import type { AddressInfo } from 'node:net';
import type { Logger } from 'fieldgate/workspace-kit';
import { cloudWallClock, type CloudClock } from './clock.js';
import { startAppSide, type AppSide, type AppSideOptions } from './appside/index.js';
import { checkDevicePacketBound, defaultDevicePacketBound, type DeviceChannel, type DeviceChannelOptions } from './channel.js';
import type { GatewayPushShape } from './channel/gateway-topics.js';
import { startDeviceChannel } from './channel/index.js';
import { DeviceLink, SYNC_REPLY_TIMEOUT_MS } from './device-link.js';
import { DEFAULT_RATE_LIMIT, RateLimiter, type RateLimitConfig } from './http/rate-limit.js';
import { buildApiRouter, buildAppRouter } from './http/routes.js';
import { createHttpServer } from './http/server.js';
import { TokenStore } from './http/tokens.js';
import { checkJsonLimits, DEFAULT_JSON_LIMITS, type JsonLimits } from './json-limits.js';
import type { SeedData } from './state/model.js';
import { EmulatorState } from './state/state.js';

export { loadSeedFile, SeedError } from './state/seed.js';
export { APP_WS_PATH } from './appside/index.js';
export { STATUS_PATH } from './http/server.js';
export { watchAppSide, type AppWatch, type AppWatchSummary } from './appside/watch.js';

export type StartDeviceChannel = (options: DeviceChannelOptions, logger: Logger) => Promise<DeviceChannel>;

export interface EmulatorOptions {
  /** 0 = ephemeral for each port. */
  httpPort: number;
  mqttPort: number;
  tcpPort: number;
  host?: string;
  seed: SeedData;
  logger: Logger;
  clock?: CloudClock;
  rateLimit?: RateLimitConfig;
  syncReplyTimeoutMs?: number;
  tcpRegisterTimeoutS?: number;
  /** Bounds on every JSON input (HTTP bodies, device payloads); default DEFAULT_JSON_LIMITS. */
  jsonLimits?: Partial<JsonLimits>;
  /** Largest MQTT packet body a device may send; larger than jsonLimits.maxBytes. Default defaultDevicePacketBound(jsonLimits): 2 MiB, or the JSON bound + 64 KiB. */
  mqttMaxPacketBytes?: number;
  /** Shape of `gateway/attributes/push` (both are documented); default `keyed` (`{"<addr>":{...}}`). */
  gatewayPushShape?: GatewayPushShape;
  /** The app-side subscription service (MQTT over TCP, ws and wss at /mqtt); none when undefined. */
  appSide?: AppSideOptions;
  /** Tests may pass a fake channel; default is the real broker + TCP stream server. */
  startChannel?: StartDeviceChannel;
  /** Sees every message just before the broker writes it to a device's connection (what reached the device, for test peers). */
  onForward?: (deviceId: string, topic: string, payload: Buffer) => void;
}

export interface Emulator {
  readonly httpPort: number;
  readonly mqttPort: number;
  readonly tcpPort: number;
  readonly state: EmulatorState;
  readonly link: DeviceLink;
  /** undefined when the emulator was started without `appSide`. */
  readonly appSide: AppSide | undefined;
  setRateLimit(config: RateLimitConfig): void;
  close(): Promise<void>;
}

export async function startEmulator(options: EmulatorOptions): Promise<Emulator> {
  const host = options.host ?? '127.0.0.1';
  const clock = options.clock ?? cloudWallClock;
  const log = options.logger;
  const jsonLimits: JsonLimits = { ...DEFAULT_JSON_LIMITS, ...options.jsonLimits };
  const mqttMaxPacketBytes = options.mqttMaxPacketBytes ?? defaultDevicePacketBound(jsonLimits);
  const limitProblem = checkJsonLimits(jsonLimits) ?? checkDevicePacketBound(mqttMaxPacketBytes, jsonLimits);
  if (limitProblem) throw new RangeError(limitProblem);
  const state = new EmulatorState(options.seed, clock);
  const link = new DeviceLink(state, log.child({ part: 'device-link' }), options.syncReplyTimeoutMs ?? SYNC_REPLY_TIMEOUT_MS, options.gatewayPushShape);
  const limiter = new RateLimiter(options.rateLimit ?? DEFAULT_RATE_LIMIT, clock);
  const tokens = new TokenStore(clock);

  const channel = await (options.startChannel ?? startDeviceChannel)({
    mqttPort: options.mqttPort, tcpPort: options.tcpPort, host, directory: link, events: link, gateways: link,
    tcpRegisterTimeoutS: options.tcpRegisterTimeoutS ?? 10, jsonLimits, maxPacketBytes: mqttMaxPacketBytes,
    ...(options.onForward ? { onForward: options.onForward } : {}),
  }, log.child({ part: 'channel' }));
  link.attach(channel);

  let appSide: AppSide | undefined;
  try {
    if (options.appSide) {
      appSide = await startAppSide(options.appSide, host, { viewKey: state.project.view_key, viewSecret: state.project.view_secret },
        log.child({ part: 'app-side' }), () => clock.now());
      link.attachAppStream(appSide.feed);
    }
  } catch (err) {
    await channel.close();
    throw err;
  }

  const startedAt = clock.now();
  const server = createHttpServer({
    state, link, tokens, limiter, apiRouter: buildApiRouter(), appRouter: buildAppRouter(), log: log.child({ part: 'http' }), jsonLimits,
    status: () => ({ started_at: startedAt, now: clock.now(), device_channel: channel.stats(), app_side: appSide?.stats() ?? null }),
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.httpPort, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    await appSide?.close();
    await channel.close();
    throw err;
  }
  const httpPort = (server.address() as AddressInfo).port;

  let closing: Promise<void> | undefined;
  return {
    httpPort, mqttPort: channel.mqttPort, tcpPort: channel.tcpPort, state, link, appSide,
    setRateLimit: (config) => limiter.set(config),
    close() {
      closing ??= (async () => {
        link.cancelWaiters();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await appSide?.close();
        await channel.close();
      })();
      return closing;
    },
  };
}
