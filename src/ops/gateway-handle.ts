// What starting the gateway gives back, and what it needs from the process around it.
import type { LevelWithSilent } from 'pino';
import type { Config } from '../core/config/config.js';
import type { ConfigIssue } from '../core/config/site-types.js';
import type { ReloadOutcome } from './config-state.js';
import type { Logger } from './log.js';
import type { PointValue } from '../core/points/types.js';
import type { SecretValues } from '../core/redact.js';
import type { GatewayStatus } from './status.js';
import type { Notifier } from './systemd.js';
import type { TimeWithWall } from '../core/time.js';
import type { StartSite } from './site-store.js';

export interface GatewayDeps {
  logger: Logger;
  env: NodeJS.ProcessEnv;
  /** Per-component log levels (FIELDGATE_LOG_LEVELS). */
  componentLevels?: ReadonlyMap<string, LevelWithSilent>;
  /** systemd notifications; a no-op notifier outside systemd. */
  notifier?: Notifier;
  /** Known secret values (the logger redacts them); fetched credentials are added. */
  secrets?: SecretValues;
  /** Clock and timers of the gateway's own loops (tick, drain); the system's by default. */
  time?: TimeWithWall;
  /** The site file the daemon runs (the commissioning page shows it); absent in tests and benches. */
  siteFile?: string;
  /** sha256 of the site file's bytes (status `config.sha256`); of the config's JSON when absent. */
  configSha256?: string;
  /**
   * The generation store and why the running text runs (ops/site-store.ts): every change of the
   * running site needs it. Absent with a siteFile: opened from it; null: `run` could not open it.
   */
  siteGenerations?: StartSite | null;
}

/** A site file read again for a reload: its config, or every problem found loading it. */
export interface ReloadCandidate {
  config?: Config;
  sha256?: string;
  issues: readonly ConfigIssue[];
}

export interface ReloadResult {
  outcome: ReloadOutcome;
  /** The generation running after the attempt. */
  generation: number;
  /** Why it was refused (empty otherwise). */
  problems: ConfigIssue[];
}

export interface GatewayHandle {
  status(): GatewayStatus;
  /** The latest values polled from a device (empty while it is offline). */
  latestValues(device: string): Readonly<Record<string, PointValue>>;
  /** Port of the 127.0.0.1 health endpoint, when enabled. */
  readonly healthPort: number | undefined;
  /** Port of the commissioning page (gateway.web), when it runs. */
  readonly webPort?: number | undefined;
  /**
   * Reads the site file again with `load` (after telling systemd a reload began) and applies what
   * differs, or refuses it whole; reloads run one at a time.
   */
  reload(load: () => ReloadCandidate | Promise<ReloadCandidate>): Promise<ReloadResult>;
  /**
   * `fieldgate reload` (SIGHUP): the seed file read again and applied as a new generation of the
   * store, the same path as the page's Apply and the cloud's site_apply (ops/site-changes.ts).
   */
  reloadSite(): Promise<ReloadResult>;
  /** Ordered drain: stop polling, flush the outbox, close links and buses. */
  stop(): Promise<void>;
}
