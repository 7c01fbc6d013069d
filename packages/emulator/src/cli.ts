// `fieldgate emulator`: the local device cloud in the foreground until SIGINT/SIGTERM.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createLogger, EXIT_CONFIG, EXIT_UNAVAILABLE, EXIT_USAGE, type CliCommand, untilSignal } from 'fieldgate/workspace-kit';
import { STATUS_PATH, startEmulator, type Emulator } from './index.js';
import { APP_WS_PATH, DEFAULT_APP_MAX_FRAME_BYTES, DEFAULT_APP_MAX_PENDING } from './appside/index.js';
import { DEFAULT_APP_BROKER_LIMITS } from './appside/broker.js';
import { ensureSelfSigned, loadTlsFiles, type AppTlsMaterial } from './appside/tls.js';
import { checkDevicePacketBound } from './channel.js';
import type { GatewayPushShape } from './channel/gateway-topics.js';
import { checkRateLimit, DEFAULT_RATE_LIMIT } from './http/rate-limit.js';
import { checkJsonLimits, DEFAULT_JSON_LIMITS } from './json-limits.js';
import { loadSeedFile, SeedError } from './state/seed.js';

export const DEFAULT_SEED_PATH = fileURLToPath(new URL('../../../config/emulator-seed.yaml', import.meta.url));
export const DEFAULT_PORTS = { http: 18080, mqtt: 11883, tcp: 18266, appMqtt: 11884, appWs: 18083, appWss: 18084 };
/**
 * Where a self-signed app-side certificate is made once and reused across runs: one per user, so
 * nobody else on the box can have planted the key the emulator would serve.
 */
export const DEFAULT_APP_TLS_DIR = join(tmpdir(), `fieldgate-emulator-app-tls-${process.getuid?.() ?? 'user'}`);

const USAGE = `usage: fieldgate emulator [--seed FILE] [--http-port N] [--mqtt-port N] [--tcp-port N]
                          [--host ADDR] [--rate-limit N] [--rate-window SECONDS]
                          [--json-max-depth N] [--json-max-bytes N] [--mqtt-max-packet-bytes N]
                          [--gateway-push-shape keyed|device]
                          [--app-mqtt-port N] [--app-ws-port N] [--app-wss-port N]
                          [--app-tls-cert FILE --app-tls-key FILE | --app-tls-dir DIR]
                          [--app-max-sessions N] [--app-max-subscriptions N] [--app-slow-subscriber-s S]
                          [--app-max-pending N] [--app-max-frame-bytes N]
                          [--app-max-pending-logins N] [--app-login-timeout-s S] [--verbose]
  Ports: 0 picks a free one (printed at start). Defaults: http ${DEFAULT_PORTS.http}, mqtt ${DEFAULT_PORTS.mqtt}, tcp ${DEFAULT_PORTS.tcp};
  app-side subscription: mqtt ${DEFAULT_PORTS.appMqtt}, ws ${DEFAULT_PORTS.appWs}, wss ${DEFAULT_PORTS.appWss} (path ${APP_WS_PATH}).
  Without --app-tls-cert/--app-tls-key a self-signed CA and server pair is made once in --app-tls-dir
  (default ${DEFAULT_APP_TLS_DIR}) and its CA file printed.
`;

function port(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new RangeError(`--${name} must be a port number from 0 to 65535`);
  return n;
}

function positive(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new RangeError(`--${name} must be a positive number`);
  return n;
}

/** Both shapes of `gateway/attributes/push` are documented; a gateway must accept either. */
function pushShape(value: string | undefined): GatewayPushShape {
  if (value === undefined || value === 'keyed' || value === 'device') return value ?? 'keyed';
  throw new RangeError('--gateway-push-shape must be keyed or device');
}

export const runEmulator: CliCommand = async (args, io) => {
  let opts;
  try {
    const { values } = parseArgs({
      args,
      options: {
        seed: { type: 'string' }, 'http-port': { type: 'string' }, 'mqtt-port': { type: 'string' },
        'tcp-port': { type: 'string' }, host: { type: 'string' }, 'rate-limit': { type: 'string' },
        'rate-window': { type: 'string' }, 'json-max-depth': { type: 'string' }, 'json-max-bytes': { type: 'string' },
        'mqtt-max-packet-bytes': { type: 'string' },
        'gateway-push-shape': { type: 'string' }, 'app-mqtt-port': { type: 'string' }, 'app-ws-port': { type: 'string' },
        'app-wss-port': { type: 'string' }, 'app-tls-cert': { type: 'string' }, 'app-tls-key': { type: 'string' },
        'app-tls-dir': { type: 'string' }, 'app-max-sessions': { type: 'string' }, 'app-max-subscriptions': { type: 'string' },
        'app-slow-subscriber-s': { type: 'string' }, 'app-max-pending': { type: 'string' }, 'app-max-frame-bytes': { type: 'string' },
        'app-max-pending-logins': { type: 'string' }, 'app-login-timeout-s': { type: 'string' }, verbose: { type: 'boolean' }, help: { type: 'boolean' },
      },
      strict: true,
    });
    if (values.help) {
      io.stdout.write(USAGE);
      return 0;
    }
    opts = {
      seed: values.seed ?? DEFAULT_SEED_PATH,
      host: values.host ?? '127.0.0.1',
      httpPort: port(values['http-port'], DEFAULT_PORTS.http, 'http-port'),
      mqttPort: port(values['mqtt-port'], DEFAULT_PORTS.mqtt, 'mqtt-port'),
      tcpPort: port(values['tcp-port'], DEFAULT_PORTS.tcp, 'tcp-port'),
      rateLimit: {
        limit: Math.floor(positive(values['rate-limit'], DEFAULT_RATE_LIMIT.limit, 'rate-limit')),
        windowS: positive(values['rate-window'], DEFAULT_RATE_LIMIT.windowS, 'rate-window'),
      },
      jsonLimits: {
        maxDepth: positive(values['json-max-depth'], DEFAULT_JSON_LIMITS.maxDepth, 'json-max-depth'),
        maxBytes: positive(values['json-max-bytes'], DEFAULT_JSON_LIMITS.maxBytes, 'json-max-bytes'),
      },
      mqttMaxPacketBytes: values['mqtt-max-packet-bytes'] === undefined ? undefined : Math.floor(positive(values['mqtt-max-packet-bytes'], 0, 'mqtt-max-packet-bytes')),
      gatewayPushShape: pushShape(values['gateway-push-shape']),
      app: {
        tcpPort: port(values['app-mqtt-port'], DEFAULT_PORTS.appMqtt, 'app-mqtt-port'),
        wsPort: port(values['app-ws-port'], DEFAULT_PORTS.appWs, 'app-ws-port'),
        wssPort: port(values['app-wss-port'], DEFAULT_PORTS.appWss, 'app-wss-port'),
        tlsCert: values['app-tls-cert'], tlsKey: values['app-tls-key'], tlsDir: values['app-tls-dir'] ?? DEFAULT_APP_TLS_DIR,
        limits: {
          maxSessions: Math.floor(positive(values['app-max-sessions'], DEFAULT_APP_BROKER_LIMITS.maxSessions, 'app-max-sessions')),
          maxSubscriptionsPerSession: Math.floor(positive(values['app-max-subscriptions'], DEFAULT_APP_BROKER_LIMITS.maxSubscriptionsPerSession, 'app-max-subscriptions')),
          slowSubscriberTimeoutMs: Math.round(1000 * positive(values['app-slow-subscriber-s'], DEFAULT_APP_BROKER_LIMITS.slowSubscriberTimeoutMs / 1000, 'app-slow-subscriber-s')),
          maxPendingLogins: Math.floor(positive(values['app-max-pending-logins'], DEFAULT_APP_BROKER_LIMITS.maxPendingLogins, 'app-max-pending-logins')),
          loginTimeoutMs: Math.round(1000 * positive(values['app-login-timeout-s'], DEFAULT_APP_BROKER_LIMITS.loginTimeoutMs / 1000, 'app-login-timeout-s')),
        },
        maxPendingMessages: Math.floor(positive(values['app-max-pending'], DEFAULT_APP_MAX_PENDING, 'app-max-pending')),
        maxFrameBytes: Math.floor(positive(values['app-max-frame-bytes'], DEFAULT_APP_MAX_FRAME_BYTES, 'app-max-frame-bytes')),
      },
      verbose: values.verbose ?? false,
    };
    const problem = checkRateLimit(opts.rateLimit) ?? checkJsonLimits(opts.jsonLimits)
      ?? (opts.mqttMaxPacketBytes === undefined ? undefined : checkDevicePacketBound(opts.mqttMaxPacketBytes, opts.jsonLimits));
    if (problem) throw new RangeError(problem);
    if ((opts.app.tlsCert === undefined) !== (opts.app.tlsKey === undefined)) {
      throw new RangeError('--app-tls-cert and --app-tls-key go together');
    }
  } catch (err) {
    io.stderr.write(`fieldgate emulator: ${(err as Error).message}\n${USAGE}`);
    return EXIT_USAGE;
  }

  const logger = createLogger({ level: opts.verbose ? 'debug' : (io.env.LOG_LEVEL === 'debug' ? 'debug' : 'info'), destination: io.stdout });
  let seed;
  try {
    seed = await loadSeedFile(opts.seed, Date.now());
  } catch (err) {
    io.stderr.write(`fieldgate emulator: ${err instanceof SeedError ? err.message : String(err)}\n`);
    return EXIT_CONFIG;
  }

  let tls: AppTlsMaterial;
  try {
    tls = opts.app.tlsCert !== undefined && opts.app.tlsKey !== undefined
      ? loadTlsFiles(opts.app.tlsCert, opts.app.tlsKey)
      : ensureSelfSigned(opts.app.tlsDir, opts.host);
  } catch (err) {
    io.stderr.write(`fieldgate emulator: app-side TLS: ${(err as Error).message}\n`);
    return EXIT_CONFIG;
  }

  let emulator: Emulator;
  try {
    emulator = await startEmulator({
      ...opts, seed, logger,
      appSide: { ...opts.app, tls: { cert: tls.cert, key: tls.key } },
    });
  } catch (err) {
    io.stderr.write(`fieldgate emulator: cannot start: ${(err as Error).message}\n`);
    return EXIT_UNAVAILABLE;
  }
  const summary = emulator.state.summary();
  io.stdout.write([
    'fieldgate emulator running',
    `  http  http://${opts.host}:${emulator.httpPort}  (interface A /api/v1, interface B /app/device/v1)`,
    `  status http://${opts.host}:${emulator.httpPort}${STATUS_PATH}  (read-only counters)`,
    `  mqtt  mqtt://${opts.host}:${emulator.mqttPort}`,
    `  tcp   ${opts.host}:${emulator.tcpPort}`,
    `  seed  ${opts.seed}: ${Object.entries(summary).map(([k, v]) => `${v} ${k}`).join(', ')}`,
    `  rate  ${opts.rateLimit.limit} requests / ${opts.rateLimit.windowS} s on interface A`,
    ...appSideLines(emulator, opts.host, tls),
    '',
  ].join('\n'));
  logger.info({ httpPort: emulator.httpPort, mqttPort: emulator.mqttPort, tcpPort: emulator.tcpPort, seed: summary }, 'emulator started');

  const signal = await untilSignal();
  logger.info({ signal }, 'emulator stopping');
  await emulator.close();
  return 0;
};

/** The app-side subscription's doors and login, as the cloud's console shows them. */
function appSideLines(emulator: Emulator, host: string, tls: AppTlsMaterial): string[] {
  const app = emulator.appSide;
  if (app === undefined) return [];
  const { view_key: key, view_secret: secret } = emulator.state.project;
  return [
    `  app   wss://${host}:${app.ports.wss}${APP_WS_PATH}  ws://${host}:${app.ports.ws}${APP_WS_PATH}  mqtt://${host}:${app.ports.tcp}`,
    `        ProjectViewKey ${key}  ProjectViewSecret ${secret}  (topics ${key}/<DeviceViewToken or +>/attributes ...)`,
    `        certificate ${tls.certFile}${tls.caFile === undefined ? '' : `  trust CA ${tls.caFile}`}`,
  ];
}
