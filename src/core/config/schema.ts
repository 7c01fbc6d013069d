// The `gateway` section: process-wide settings validated by convict (defaults, env overrides, secrets).
import convict from 'convict';
import { parseDurationMs } from './duration.js';
import { isMapping, joinPath } from './fields.js';
import { describeValue, unknownKeyMessage } from './issues.js';
import type { ConfigIssue, GatewaySettings } from './site-types.js';
import { gatewayFrom, type RawGateway } from './gateway-settings.js';
import { SELF_IDENTITY_DURATION_KEYS, selfIdentitySchema } from './self-identity.js';
import { PASSWORD_HASH_ENV, webIssues } from './web-settings.js';
import { check, cloudInteger, cloudNumber, cloudString, formats } from './schema-formats.js';

/** Where a site keeps its own profiles unless `gateway.profileDirs` says otherwise (a missing one is fine). */
export const DEFAULT_PROFILE_DIR = '/etc/fieldgate/profiles';

/** The convict schema. The northbound engineer extends `cloud` here (and CloudSettings in site-types.ts). */
export const GATEWAY_SCHEMA = {
  stateDir: { doc: 'Directory for the outbox and credentials (relative to the working directory).', default: './state', format: formats.nonEmptyString, env: 'FIELDGATE_STATE_DIR' },
  logLevel: { doc: 'pino log level.', default: 'info', format: formats.logLevel, env: 'LOG_LEVEL' },
  profileDirs: { doc: 'Directories of the site\'s own device profiles; a name there overrides a shipped profile.', default: [DEFAULT_PROFILE_DIR], format: formats.directoryList },
  health: {
    enabled: { doc: 'Serve /healthz, /metrics and /status.', default: true, format: formats.boolean },
    host: { doc: 'Listen address; fixed to loopback.', default: '127.0.0.1', format: formats.loopback },
    port: { doc: 'Listen port of the health endpoint.', default: 9180, format: formats.port, env: 'FIELDGATE_HEALTH_PORT' },
    eventLoopSampleMs: cloudNumber('Event-loop delay sampling period of /metrics (ms); each sample wakes the process.', 1000, 10, 60_000),
    watchdogSlackMs: cloudNumber('Time every loop (poller, bus, cloud link) gets beyond its own expected time before the systemd watchdog and /healthz call it stalled (ms).', 30_000, 1000, 3_600_000),
  },
  web: {
    port: { doc: 'Port of the commissioning page; 0 = off.', default: 0, format: formats.portOrOff },
    address: { doc: 'Listen address of the commissioning page; any other than 127.0.0.1 needs passwordHash.', default: '127.0.0.1', format: formats.listenAddress },
    passwordHash: cloudString('scrypt hash of the page\'s password, written by "fieldgate web passwd".', { env: PASSWORD_HASH_ENV, sensitive: true }),
    cert: cloudString('PEM certificate file: with key, the page is served over HTTPS.'),
    key: cloudString('PEM private key file of cert.'),
    allowWrites: { doc: 'The device page may write writable points (same checks as a cloud push).', default: false, format: formats.boolean },
    allowReload: { doc: 'The page may apply an edited site file through the reload path.', default: false, format: formats.boolean },
    maxEventClients: cloudNumber('Live event streams open at once; more are refused (503).', 20, 1, 1000),
    historySamples: cloudNumber('Samples kept per numeric point for its 15-minute sparkline.', 180, 10, 10_000),
    sessionIdleMs: cloudNumber('A page session unused this long ends (ms).', 3_600_000, 60_000, 604_800_000),
    maxBodyBytes: cloudNumber('Largest request body the page accepts (bytes).', 1_048_576, 1024, 16_777_216),
    loginFailuresPerMinute: cloudNumber('Failed logins per client address per minute before logins are refused (429).', 5, 1, 1000),
    loginFailuresPerMinuteTotal: cloudInteger('Failed logins per minute from all addresses together before every login is refused (429).', 30, 1, 100_000),
    statusPeriodMs: cloudInteger('The overview\'s status event period while it is open (ms).', 2000, 250, 60_000),
    maxBufferedBytes: cloudInteger('Unsent bytes an event-stream client may hold before it is dropped as too slow.', 262_144, 16_384, 16_777_216),
    maxSessions: cloudInteger('Page sessions kept at once; the least recently used goes first.', 256, 1, 100_000),
    lineFramesKept: cloudInteger('Frames the line page keeps per bus.', 400, 10, 100_000),
    maxScanUnits: cloudInteger('Units one scan may ask (each silent one costs the bus\'s timeout).', 32, 1, 256),
    maxConnections: cloudInteger('Page connections open at once; 0 = 4 x maxEventClients + 256.', 0, 0, 100_000),
  },
  cloud: {
    mqttUrl: cloudString('Device-channel broker URL.', { env: 'FIELDGATE_MQTT_URL', format: formats.url(['mqtt', 'mqtts', 'ws', 'wss']) }),
    apiBaseUrl: cloudString('Base URL of the cloud HTTP interfaces.', { env: 'FIELDGATE_API_BASE_URL', format: formats.url(['http', 'https']) }),
    projectKey: cloudString('Project key for interface A.', { env: 'FIELDGATE_PROJECT_KEY', sensitive: true }),
    appId: cloudString('Application id for interface A.', { env: 'FIELDGATE_APP_ID' }),
    accessKey: cloudString('Access key for interface A.', { env: 'FIELDGATE_ACCESS_KEY', sensitive: true }),
    secretKey: cloudString('Secret key for interface A.', { env: 'FIELDGATE_SECRET_KEY', sensitive: true }),
    caFile: cloudString('PEM file with the CA of the broker certificate.', { env: 'FIELDGATE_CA_FILE' }),
    mode: { doc: 'How devices reach the cloud unless their cloud block says otherwise: direct (own link) or gateway (through the identity).', default: 'direct', format: check((v) => v === 'direct' || v === 'gateway', 'must be direct or gateway') },
    identity: {
      deviceId: cloudString('fieldgate\'s own cloud device id (interface A).'),
      deviceKey: cloudString('fieldgate\'s own device key (certificate endpoint).'),
      typeKey: cloudString('Device type key for the certificate endpoint.'),
      allowCreate: { doc: 'Create fieldgate\'s cloud device by deviceKey through interface A when missing.', default: false, format: formats.boolean },
      accessToken: cloudString('fieldgate\'s own device credential.', { env: 'FIELDGATE_IDENTITY_ACCESS_TOKEN', sensitive: true }),
      projectKey: cloudString('Project key of the identity when not the gateway\'s.', { sensitive: true }),
      ...selfIdentitySchema(cloudNumber),
    },
    gatewayBatchMaxBytes: cloudNumber('Gateway mode: largest gateway/attributes message (bytes); one larger report goes alone.', 65_536, 1024, 16_777_216),
    gatewayBatchLingerMs: cloudNumber('Gateway mode: how long a batch waits for more live reports before it is sent (ms); 0 = at once.', 100, 0, 10_000),
    keepaliveS: cloudNumber('MQTT keepalive in seconds.', 120, 10, 3600),
    connectTimeoutMs: cloudNumber('An MQTT connect attempt without CONNACK within this long fails (ms).', 10_000, 1000, 300_000),
    httpTimeoutMs: cloudNumber('A cloud HTTP request without a complete answer within this long fails (ms).', 10_000, 1000, 300_000),
    syncPeriodMs: cloudNumber('Period of the interface-B read of writable points (ms); 0 = only at start and reconnect.', 600_000, 0, 86_400_000, 'FIELDGATE_SYNC_PERIOD_MS'),
    publishWindow: cloudNumber('Reports in flight per device link before waiting for PUBACKs.', 50, 1, 1000),
    replayRatePerS: cloudNumber('Backlog replay pace for all links together (reports/s).', 200, 1, 100_000),
    drainMs: cloudNumber('On stop, how long connected links may keep sending the outbox (ms).', 3000, 0, 60_000),
    maxInboundBytes: cloudNumber('Cloud payloads larger than this are refused unread (bytes).', 262_144, 1024, 16_777_216),
    inbound: {
      maxKeys: cloudNumber('Keys of one push or command (a read list counts by entries); more refuse the whole message.', 1000, 1, 1_000_000),
      maxPending: cloudNumber('Cloud messages handled at once per device; more are refused, commands answered busy.', 64, 1, 100_000),
      busShare: cloudNumber('Share of bus time cloud writes, reads and read-backs may take while polls are waiting (0.05..1).', 0.5, 0.05, 1),
      unknownAddressesLogged: cloudNumber('Gateway mode: distinct unknown sub-device addresses logged (once each); more are only counted.', 256, 1, 100_000),
    },
    reconnect: {
      initialMs: cloudNumber('First MQTT reconnect delay (ms).', 1000, 10, 600_000, 'FIELDGATE_RECONNECT_INITIAL_MS'),
      maxMs: cloudNumber('Longest MQTT reconnect delay (ms).', 60_000, 10, 3_600_000, 'FIELDGATE_RECONNECT_MAX_MS'),
      jitter: cloudNumber('Fraction of each delay randomised (0..1).', 0.3, 0, 1),
      probeMs: cloudNumber('While waiting out a reconnect delay after the broker was unreachable, a TCP connect to it is tried this often; when it answers the link reconnects at once (ms; 0 = off).', 2000, 0, 600_000),
    },
    outbox: {
      maxBytes: cloudNumber('Outbox size cap in bytes; the oldest reports are dropped beyond it.', 64 * 1024 * 1024, 65_536, 8 * 1024 ** 3, 'FIELDGATE_OUTBOX_MAX_BYTES'),
      commitIntervalMs: cloudNumber('Write-ahead mode: group-commit window of the outbox (ms).', 50, 1, 10_000),
      mode: { doc: 'memory-first: only reports not acked within durableAfterMs are written; write-ahead: every report is.', default: 'memory-first', format: check((v) => v === 'memory-first' || v === 'write-ahead', 'must be memory-first or write-ahead') },
      durableAfterMs: cloudNumber('Memory-first mode: the longest a report lives in memory only (ms), the crash window.', 1000, 0, 60_000),
      progressLogMs: cloudNumber('Backlog replay progress is logged at most this often (ms).', 10_000, 1000, 3_600_000),
      storageRetryMs: cloudNumber('While the outbox file takes no writes (disk full, read-only, I/O error): time between write attempts (ms).', 1000, 100, 600_000),
      condemnAfterMs: cloudNumber('While running, an outbox file is given up (salvaged, moved aside) only after it was found corrupt by every check for this long: a read error is transient until then (ms).', 60_000, 0, 3_600_000),
      recordOverheadBytes: cloudNumber('Bytes a report held in memory costs beyond its payload (objects, buffer, queue entry), counted against maxBytes while it is in memory.', 450, 0, 65_536),
    },
    rateQueue: {
      ratePerS: cloudNumber('Cloud HTTP requests started per second at most.', 5, 1, 1000),
      concurrency: cloudNumber('Cloud HTTP requests in flight at most.', 2, 1, 100),
      maxPending: cloudNumber('Cloud HTTP requests waiting at most; more are refused and counted.', 200, 1, 100_000),
      retries: cloudNumber('Retries of a request after a 5xx or network error.', 3, 0, 20),
    },
  },
};

/** Keys that also take a duration string ("500ms", "2s", "10m", "1h"), in the file and in the environment. */
const DURATION_KEYS: ReadonlySet<string> = new Set([
  'gateway.health.eventLoopSampleMs', 'gateway.health.watchdogSlackMs', 'gateway.web.sessionIdleMs', 'gateway.web.statusPeriodMs', 'gateway.cloud.syncPeriodMs', 'gateway.cloud.gatewayBatchLingerMs', 'gateway.cloud.connectTimeoutMs', 'gateway.cloud.httpTimeoutMs', 'gateway.cloud.reconnect.initialMs', 'gateway.cloud.reconnect.maxMs', 'gateway.cloud.outbox.commitIntervalMs', 'gateway.cloud.outbox.durableAfterMs', 'gateway.cloud.outbox.progressLogMs', 'gateway.cloud.outbox.storageRetryMs', 'gateway.cloud.outbox.condemnAfterMs', 'gateway.cloud.reconnect.probeMs',
  ...SELF_IDENTITY_DURATION_KEYS,
]);
const DURATION_TEXT = 'must be a duration in ms or like "500ms", "2s", "10m", "1h"';

interface SchemaLeaf {
  default: unknown;
  env?: string;
  sensitive?: boolean;
}
type SchemaNode = { [key: string]: SchemaNode | SchemaLeaf };

function isLeaf(node: SchemaNode | SchemaLeaf): node is SchemaLeaf {
  return Object.hasOwn(node, 'default');
}

/**
 * convict coerces strings to the default's type ("no" would become true); that suits environment
 * variables but not a typed file, so a file value must already have the default's type.
 */
function leafProblem(node: SchemaLeaf, value: unknown): string | undefined {
  if (isMapping(value)) return 'must be a single value, not a mapping';
  if (Array.isArray(node.default) && !Array.isArray(value)) return `must be a list (got ${describeValue(value)})`;
  const expected = typeof node.default;
  if ((expected === 'boolean' || expected === 'number') && typeof value !== expected) {
    const got = node.sensitive ? '' : ` (got ${describeValue(value)})`;
    return `must be ${expected === 'boolean' ? 'true or false' : 'a number'}${got}`;
  }
  return undefined;
}

/**
 * Our own pass before convict: unknown keys (with a suggestion) and mappings where a value belongs
 * (or the reverse) become issues and are dropped, since convict's overlay crashes on some of them.
 */
function preflight(raw: Record<string, unknown>, schema: SchemaNode, path: string, issues: ConfigIssue[]): Record<string, unknown> {
  const clean: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    const node = Object.hasOwn(schema, key) ? schema[key] : undefined;
    const keyPath = joinPath(path, key);
    if (!node) {
      issues.push({ path: keyPath, message: unknownKeyMessage(key, Object.keys(schema)) });
    } else if (isLeaf(node) && DURATION_KEYS.has(keyPath) && typeof value === 'string') {
      const ms = parseDurationMs(value);
      if (ms === undefined) issues.push({ path: keyPath, message: `${DURATION_TEXT} (got ${describeValue(value)})` });
      else clean[key] = ms;
    } else if (isLeaf(node)) {
      const problem = leafProblem(node, value);
      if (problem) issues.push({ path: keyPath, message: problem });
      else clean[key] = value;
    } else if (value === undefined || value === null) {
      continue;
    } else if (!isMapping(value)) {
      issues.push({ path: keyPath, message: `must be a mapping (got ${describeValue(value)})` });
    } else {
      clean[key] = preflight(value, node, keyPath, issues);
    }
  }
  return clean;
}

function envNames(schema: SchemaNode, prefix = ''): Map<string, string> {
  const names = new Map<string, string>();
  for (const [key, node] of Object.entries(schema)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (isLeaf(node)) {
      if (node.env) names.set(name, node.env);
    } else {
      for (const [inner, env] of envNames(node, name)) names.set(inner, env);
    }
  }
  return names;
}

const VALUE_LINE = /^([\w.]+): (.*?)(?:: value was (.*))?$/;
const PARAM_LINE = /^configuration param '([\w.]+)' (.*)$/;

/** convict reports one problem per line, "name: message[: value was JSON]"; turn each into an issue. */
export function convictIssues(text: string, env: NodeJS.ProcessEnv, schema: SchemaNode = GATEWAY_SCHEMA): ConfigIssue[] {
  const fromEnv = envNames(schema);
  return text.split('\n').filter(Boolean).map((line) => {
    const param = PARAM_LINE.exec(line);
    if (param) return { path: joinPath('gateway', param[1]), message: param[2].includes('not declared') ? 'unknown key' : param[2] };
    const match = VALUE_LINE.exec(line);
    if (!match) return { path: 'gateway', message: line };
    const [, name, message, value] = match;
    const envName = fromEnv.get(name);
    const origin = envName !== undefined && env[envName] !== undefined ? `, set by ${envName}` : '';
    const got = value !== undefined ? `got ${value}` : '';
    const detail = [got, origin.replace(/^, /, '')].filter(Boolean).join(', ');
    return { path: joinPath('gateway', name), message: detail ? `${message.trim()} (${detail})` : message.trim() };
  });
}

function schemaOrder(schema: SchemaNode, prefix = 'gateway'): string[] {
  return Object.entries(schema).flatMap(([key, node]) => {
    const path = `${prefix}.${key}`;
    return isLeaf(node) ? [path] : [path, ...schemaOrder(node, path)];
  });
}

/** Schema order, so preflight and convict findings read top to bottom like the file. */
function sortBySchema(issues: ConfigIssue[]): ConfigIssue[] {
  const order = schemaOrder(GATEWAY_SCHEMA);
  // A key the schema lacks goes after the last known key of its section.
  const rank = (path: string) => {
    const exact = order.indexOf(path);
    if (exact >= 0) return exact;
    const parent = path.slice(0, path.lastIndexOf('.'));
    const siblings = order.map((known, index) => (known.startsWith(`${parent}.`) ? index : -1));
    return Math.max(order.indexOf(parent), ...siblings) + 0.5;
  };
  return issues.map((issue) => ({ issue, rank: rank(issue.path) })).sort((a, b) => a.rank - b.rank).map(({ issue }) => issue);
}

/** The environment convict sees: duration variables ("10m") turned into milliseconds, bad ones reported and dropped. */
function durationEnv(env: NodeJS.ProcessEnv, issues: ConfigIssue[]): NodeJS.ProcessEnv {
  const copy = { ...env };
  for (const [name, envName] of envNames(GATEWAY_SCHEMA)) {
    const path = `gateway.${name}`;
    const value = copy[envName];
    if (!DURATION_KEYS.has(path) || value === undefined) continue;
    const ms = parseDurationMs(value);
    if (ms === undefined) {
      issues.push({ path, message: `${DURATION_TEXT} (got ${describeValue(value)}, set by ${envName})` });
      delete copy[envName];
    } else {
      copy[envName] = String(ms);
    }
  }
  return copy;
}

/** Validates the `gateway` section (absent = all defaults) with environment overrides applied. */
export function validateGateway(raw: unknown, env: NodeJS.ProcessEnv): { gateway?: GatewaySettings; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  let input: Record<string, unknown> = {};
  if (isMapping(raw)) input = preflight(raw, GATEWAY_SCHEMA, 'gateway', issues);
  else if (raw !== undefined && raw !== null) issues.push({ path: 'gateway', message: `must be a mapping (got ${describeValue(raw)})` });
  // args: [] keeps convict away from process.argv; env is the caller's, never process.env implicitly.
  const config = convict<RawGateway>(GATEWAY_SCHEMA as convict.Schema<RawGateway>, { env: durationEnv(env, issues), args: [] });
  try {
    config.load(input).validate({ allowed: 'strict' });
  } catch (err) {
    issues.push(...convictIssues(err instanceof Error ? err.message : String(err), env));
  }
  // After a failed validate() the properties are still loaded: the checks across keys run too.
  const props = config.getProperties();
  issues.push(...webIssues(props.web, props.health.enabled ? props.health.port : undefined));
  return issues.length > 0 ? { issues: sortBySchema(issues) } : { gateway: gatewayFrom(config.getProperties()), issues };
}
