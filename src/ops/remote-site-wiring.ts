// Wiring of remote configuration (composition only): the store chosen at start, the reload path,
// the reload's reader, and what must come up after an apply.
import { readFileSync } from 'node:fs';
import type { Config } from '../core/config/config.js';
import type { AddressHolder } from '../core/config/address-reuse.js';
import { DEFAULT_SELF_IDENTITY } from '../core/config/self-identity.js';
import { siteTextLimits } from '../core/config/text-guards.js';
import type { TimeWithWall } from '../core/time.js';
import type { Logger } from '../core/logger.js';
import type { ReloadCandidate, ReloadResult } from './gateway-handle.js';
import { RemoteSite } from './remote-site.js';
import { readSiteFile } from './site-file-reader.js';
import type { StartSite } from './site-store.js';

export interface RemoteSiteWiring {
  start: StartSite;
  env: NodeJS.ProcessEnv;
  config: Config;
  current(): Config;
  reload(load: () => ReloadCandidate | Promise<ReloadCandidate>): Promise<ReloadResult>;
  addressHolders(): ReadonlyMap<string, AddressHolder>;
  busUp(name: string): boolean;
  linkUp(device: string): boolean;
  changed(): void;
  runningDigest(): string;
  /** The seed file (`--config`); absent: reloads on the box are not recorded. */
  seedFile?: string;
  time: TimeWithWall;
  log: Logger;
}

export function createRemoteSite(w: RemoteSiteWiring): RemoteSite {
  const settings = { ...DEFAULT_SELF_IDENTITY.site, ...w.config.gateway.cloud.identity?.site };
  return new RemoteSite({
    store: w.start.store, book: w.start.book, startReason: w.start.reason, current: w.current, reload: w.reload,
    readFile: (path) => readSiteFile(path, w.env), addressHolders: w.addressHolders, busUp: w.busUp, linkUp: w.linkUp,
    settings, maxBytes: siteTextLimits(w.env, []).maxBytes, time: w.time, log: w.log, changed: w.changed, runningDigest: w.runningDigest,
    readSeed: () => {
      try {
        return w.seedFile === undefined ? undefined : readFileSync(w.seedFile, 'utf8');
      } catch {
        return undefined;
      }
    },
  });
}
