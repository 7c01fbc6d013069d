// The validated, normalised shape of a site file. Produced by ops/site-file.ts; every default filled in.
import type { SelfIdentitySettings } from './self-identity.js';
import type { ByteOrder, Table, ValueType, WordOrder } from '../points/types.js';
import type { CommandConfig, StreamConfig } from './command-types.js';
import type { BackoffConfig, BusConfig } from './bus-config-types.js';

export type {
  BackoffConfig, BusConfig, CooldownConfig, Parity, RtuBusConfig, RtuOverTcpBusConfig, SharedBusSettings, TcpBusConfig,
} from './bus-config-types.js';

export interface ReportConfig {
  /** change: send when the value moved beyond the deadband; always: every poll. */
  mode: 'change' | 'always';
  deadband: number;
  deadbandKind: 'absolute' | 'percent';
  /** Send the value even if unchanged after this long (heartbeat); 0 = never. */
  maxSilenceMs: number;
}

export interface PointConfig {
  /** Cloud attribute identifier. */
  id: string;
  table: Table;
  address: number;
  type: ValueType;
  /** Bit index 0..15 for type 'bit'. */
  bit: number;
  /** Registers for type 'string'. */
  length: number;
  wordOrder: WordOrder;
  byteOrder: ByteOrder;
  scale: number;
  offset: number;
  writable: boolean;
  /** Engineering-unit bounds for writes (after scale/offset). */
  min?: number;
  max?: number;
  report: ReportConfig;
  /** Unit of the engineering value ("V", "kWh"), for people and listings; not converted. */
  unit?: string;
  /** Id of an int16 point holding a power of ten: value = decoded x 10^that (SunSpec `*_SF`). */
  scaleFactor?: string;
  /** Raw value by which the device says "not implemented" (integer types; "" for an all-NUL string): reported as absent. */
  notImplemented?: number | string;
}

export interface DeviceLimits {
  maxRegistersPerRead: number;
  maxBitsPerRead: number;
  /** Unused registers (or bits) that may be read to merge two requests. */
  maxGap: number;
  /** Always write with FC16/FC15 even for a single register/coil. */
  forceMultiWrite: boolean;
  /** Pause before a point whose own read was refused is read again (default 60 s). */
  reprobeFailedMs?: number;
  /** Serves several requests at once on a TCP connection (else one at a time); filled by the loader. */
  concurrent?: boolean;
}

export interface DeviceConfig {
  name: string;
  bus: string;
  unitId: number;
  pollIntervalMs: number;
  limits: DeviceLimits;
  points: PointConfig[];
  /** How this field device gets its cloud identity; absent = not connected to the cloud. */
  cloud?: DeviceCloudConfig;
  commands: CommandConfig[];
  streams: StreamConfig[];
  /** The model its profile(s) say it is, checked before polling; absent = nothing to check or `identify: false`. */
  identification?: DeviceIdentification;
  /** Former ids of profile points the site file still names, taken as the current ones for one release (logged at start). */
  renamedPoints?: { profile: string; formerly: string; now: string; path: string }[];
}

/**
 * A register whose value names the model (a meter code, a model register, a SunSpec common model's
 * Mn/Md string), as the manufacturer's document gives it. In a SunSpec profile the address is an offset
 * from the model's ID register, like its points (identificationAt places it).
 */
export interface IdentificationRegister {
  /** The register read as a point (id "identification_N"): table, address, type, length, word and byte order. */
  point: PointConfig;
  /** Values this profile's model shows there; any one matches. Strings compare with trailing NULs and spaces cut. */
  values: readonly (number | string)[];
  /** What the document calls the register and where it says so ("Meter code (FC02h), section 1.3.1, page 29"). */
  label: string;
  /**
   * The device answers it only to a read of this register alone; a longer read there returns a
   * measurement's words (the EM24_E1's code at 000Bh shares its register with V L3-L1). Every
   * identification read is of one register alone, so this only tells a simulator what to serve.
   */
  readAlone?: boolean;
}

/** How a device named by profile must identify itself (profile-expand.ts), and which other models it could be. */
export interface DeviceIdentification {
  /** The device's profiles that declare identification. */
  profiles: string[];
  registers: IdentificationRegister[];
  /** Other profiles judged from the same registers: named when the device is not its own model. */
  others: { name: string; registers: IdentificationRegister[] }[];
}

/**
 * A field device's cloud identity. Sources, in order: accessToken (+ projectKey or the gateway's),
 * the credential store, interface A by deviceId (or create by deviceKey when allowCreate), then
 * `POST /device/v1/certificate` by deviceKey (+ typeKey).
 */
export interface DeviceCloudConfig {
  /** direct: own MQTT link; gateway: reports and commands through fieldgate's identity. Absent = gateway.cloud.mode. */
  mode?: CloudMode;
  /** The device's address among the identity's sub-devices; absent = the one announced before, else `<bus>/<unitId>` (gateway-mode.ts). */
  subDeviceAddress?: string;
  deviceId?: string;
  deviceKey?: string;
  typeKey?: string;
  allowCreate: boolean;
  /** Secret: the device credential. Better set via env or the credentials file than here. */
  accessToken?: string;
  projectKey?: string;
  /** Adds the poll time (Unix ms) of each report as this attribute; absent = not added. */
  timestampAttribute?: string;
}

export type CloudMode = 'direct' | 'gateway';

/** fieldgate's own cloud device: the same identity fields as a device's, same credential sources. */
export type IdentityConfig = Omit<DeviceCloudConfig, 'mode' | 'subDeviceAddress' | 'timestampAttribute'>;

export interface SiteConfig {
  buses: BusConfig[];
  devices: DeviceConfig[];
  /**
   * Sub-device addresses this state directory announced before, by device name: kept by devices
   * without an explicit `subDeviceAddress` (sub-device-addresses.ts). Never from the site file.
   */
  announcedAddresses?: Readonly<Record<string, string>>;
}

/** `gateway.web`: the commissioning page (docs/web.md). */
export interface WebSettings {
  port: number;
  address: string;
  /** `scrypt:N:r:p:salt:hash` (base64url), from FIELDGATE_WEB_PASSWORD_HASH; absent: no login (loopback only). */
  passwordHash?: string;
  /** PEM files: both set = HTTPS. */
  cert?: string;
  key?: string;
  allowWrites: boolean;
  allowReload: boolean;
  /** Event-stream clients at once; more are refused with 503. */
  maxEventClients: number;
  /** Samples kept per numeric point for the 15-minute sparkline (one per 15 min / historySamples). */
  historySamples: number;
  sessionIdleMs: number;
  maxBodyBytes: number;
  /** Failed logins per client address per minute before further attempts are refused (429). */
  loginFailuresPerMinute: number;
  /** Failed logins per minute from all addresses together before every login is refused (429). */
  loginFailuresPerMinuteTotal: number;
  /** The overview's status event period while it is open (ms). */
  statusPeriodMs: number;
  /** Unsent bytes an event-stream client may hold before it is dropped. */
  maxBufferedBytes: number;
  /** Sessions kept at once (least recently used first out). */
  maxSessions: number;
  /** Frames the line page keeps per bus. */
  lineFramesKept: number;
  /** Units one scan may ask. */
  maxScanUnits: number;
  /** Sockets open at once (the site file's 0 becomes 4 x maxEventClients + 256). */
  maxConnections: number;
}

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface HealthSettings {
  enabled: boolean;
  /** Always 127.0.0.1: the health endpoint is never exposed beyond the box. */
  host: '127.0.0.1';
  port: number;
  /** Event-loop delay sampling period of /metrics (ms); absent: 1000. */
  eventLoopSampleMs?: number;
  /** Beyond each loop's expected time before the watchdog calls it stalled (ms); absent: 30 s. */
  watchdogSlackMs?: number;
}

/** Device-cloud connection. Optional fields are absent when not configured. */
export interface CloudSettings {
  mqttUrl?: string;
  apiBaseUrl?: string;
  projectKey?: string;
  appId?: string;
  accessKey?: string;
  secretKey?: string;
  /** PEM file with the CA that signs the broker certificate (mqtts://). */
  caFile?: string;
  /** Default for devices with a cloud block; always set from the site file (absent = direct). */
  mode?: CloudMode;
  /** fieldgate's own cloud device; required when any device is in gateway mode. */
  identity?: IdentityConfig & Partial<SelfIdentitySettings>;
  /** Gateway mode: largest batched `gateway/attributes` message in bytes (default 64 KiB). */
  gatewayBatchMaxBytes?: number;
  gatewayBatchLingerMs?: number;
  keepaliveS: number;
  /** An MQTT connect attempt without CONNACK within this long fails and is retried with backoff. */
  connectTimeoutMs: number;
  /** A cloud HTTP request (interface A or B) without a complete answer within this long fails. */
  httpTimeoutMs: number;
  /** Period of the interface-B read of writable points' cloud values; 0 = only at start/reconnect. */
  syncPeriodMs: number;
  /** Publishes in flight per device link before waiting for PUBACKs. */
  publishWindow: number;
  /** Backlog replay pace per device (reports/s), so live reports still get through. */
  replayRatePerS: number;
  /** `probeMs`: while a reconnect waits after an unreachable broker, a TCP probe this often (0 = off). */
  reconnect: BackoffConfig & { probeMs?: number };
  outbox: {
    maxBytes: number;
    /** Write-ahead mode's group-commit window. */
    commitIntervalMs: number;
    // Always set from the site file; optional for configs built in code (defaults apply).
    mode?: 'memory-first' | 'write-ahead';
    /** Memory-first: the longest a report lives in memory only (the kill -9 window). */
    durableAfterMs?: number;
    /** Replay progress is logged at most this often. */
    progressLogMs?: number;
    /** While the file takes no writes: time between write attempts. */
    storageRetryMs?: number;
    /** While running: how long a file found corrupt by every check is kept before it is given up. */
    condemnAfterMs?: number;
    /** Memory cost of a report beyond its payload, counted against maxBytes while it is in memory. */
    recordOverheadBytes?: number;
  };
  rateQueue: { ratePerS: number; concurrency: number; maxPending: number; retries: number };
  /** Payloads larger than this from the cloud are refused unread. */
  maxInboundBytes: number;
  inbound: InboundLimits;
  /** On stop, how long connected links may keep sending what is left in the outbox. */
  drainMs: number;
}

/** Bounds on what one cloud message may cost the gateway. */
export interface InboundLimits {
  /** Keys of one push or command (a `read` list counts by entries); more refuse the message. */
  maxKeys: number;
  /** Messages handled at once per device; more are refused and commands answered busy. */
  maxPending: number;
  /** Share of a bus's time that cloud-originated work may take while polls are waiting, (0, 1]. */
  busShare: number;
  /** Gateway mode: distinct unknown sub-device addresses logged once each (default 256); more only counted. */
  unknownAddressesLogged?: number;
}

/** The `gateway` section of the site file, after defaults and environment overrides. */
export interface GatewaySettings {
  stateDir: string;
  logLevel: LogLevel;
  health: HealthSettings;
  cloud: CloudSettings;
  /** Directories of a site's own device profiles (a name there overrides a shipped profile); absent = none. */
  profileDirs?: string[];
  /** The commissioning page (docs/web.md); absent while off. */
  web?: WebSettings;
}

export interface ProfileOverride {
  name: string;
  /** The site's file that is used. */
  file: string;
  /** The shipped file it replaces. */
  shipped: string;
}

/** One problem in a config file: where (`devices[1].points[3].type`) and what. */
export interface ConfigIssue {
  path: string;
  message: string;
}
