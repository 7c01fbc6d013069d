// Wiring of the commissioning page (composition only): its server, the live feed it was given,
// and the read, poll and scan forms through the running buses. A page that cannot start (port
// taken, certificate unreadable) is logged and the gateway runs on without it.
import type { LevelWithSilent } from 'pino';
import type { Config } from '../../core/config/config.js';
import { DEFAULT_SELF_IDENTITY } from '../../core/config/self-identity.js';
import type { DeviceConfig, WebSettings } from '../../core/config/site-types.js';
import type { PointValue } from '../../core/points/types.js';
import type { TimeWithWall } from '../../core/time.js';
import { componentLogger, type Logger } from '../log.js';
import { rootLevelControl } from '../self/log-level.js';
import { selfSettings } from '../self/self-device.js';
import { remoteReadParts, type GatewayParts } from '../self/wiring.js';
import type { LineCapture } from '../../field/modbus/line-capture.js';
import type { LiveFeed } from './live-feed.js';
import { startWebServer, type WebServer } from './server.js';
import { SiteFileView } from './site-view.js';
import { WebCommands } from './web-commands.js';
import type { SiteChanges } from '../site-changes.js';
import { DeviceAdding } from './device-adding.js';
import type { CommandService } from '../../device/commands.js';
import { siteRedaction, type SiteRedaction, type TextRedactor } from '../../core/config/site-redaction.js';

export interface WebPageParts {
  settings: WebSettings;
  feed: LiveFeed | undefined;
  gateway: GatewayParts;
  config: Config;
  current(): Config;
  latest(device: string): Readonly<Record<string, PointValue>>;
  onReload(listener: (next: Config) => void): void;
  logger: Logger;
  levels?: ReadonlyMap<string, LevelWithSilent>;
  time: TimeWithWall;
  /** The one path of changes of the running site (absent without a seed file or a store: the site-file page answers 404). */
  siteChanges?: SiteChanges;
  cloudAttributes?(device: DeviceConfig, keys: readonly string[]): Promise<Record<string, unknown>>;
  /** Per bus: its transactions for the line page (southbound keeps it current). */
  captures: ReadonlyMap<string, LineCapture>;
  /** Each device's write path (the cloud's; kept current by reloads). */
  writers: ReadonlyMap<string, CommandService>;
  /** The process's known secrets (fetched credentials too): every answer of the page is redacted with them. */
  secrets?: TextRedactor;
}

/** The running config's redaction, made again only when a reload changed the config. */
function runningRedaction(current: () => Config, also: TextRedactor | undefined): () => SiteRedaction {
  let config: Config | undefined;
  let redaction: SiteRedaction | undefined;
  return () => {
    const now = current();
    if (now !== config || !redaction) {
      config = now;
      redaction = siteRedaction({ running: now, ...(also ? { also } : {}) });
    }
    return redaction;
  };
}

export async function startWebPage(parts: WebPageParts): Promise<WebServer | undefined> {
  const { settings, feed, gateway, logger, time } = parts;
  const log = componentLogger(logger, 'web', parts.levels);
  const limits = selfSettings(parts.config.gateway.cloud.identity, DEFAULT_SELF_IDENTITY).commands;
  const reads = remoteReadParts(parts.config, gateway, parts.onReload);
  const commands = new WebCommands(reads, parts.writers, limits, gateway.status, rootLevelControl(logger), time, log, settings.maxScanUnits);
  const site = parts.siteChanges === undefined ? undefined : new SiteFileView({
    changes: parts.siteChanges, current: parts.current, log, maxSessions: settings.maxSessions,
    ...(parts.secrets ? { knownSecrets: parts.secrets } : {}),
  });
  const adding = site ? new DeviceAdding({ site, current: parts.current, log, buses: reads.buses, ...(parts.secrets ? { knownSecrets: parts.secrets } : {}) }) : undefined;
  if (feed) parts.onReload((next) => feed.retain(new Set(next.site.devices.map((d) => d.name))));
  try {
    return await startWebServer(settings, {
      status: gateway.status, devices: () => parts.current().site.devices, latest: parts.latest, commands, captures: parts.captures, redaction: runningRedaction(parts.current, parts.secrets), ...(parts.cloudAttributes ? { cloudAttributes: parts.cloudAttributes } : {}), ...(feed ? { feed } : {}), ...(site ? { site } : {}), ...(adding ? { adding } : {}),
    }, log, time);
  } catch (err) {
    log.error({ err, port: settings.port, address: settings.address }, 'commissioning page could not start; continuing without it');
    return undefined;
  }
}
