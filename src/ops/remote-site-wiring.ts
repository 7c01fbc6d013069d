// Wiring of the site changes and the cloud's site commands (composition only): the store chosen at
// start, the reload path, the reload's reader, the seed file, and what must come up after an apply.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { Config } from '../core/config/config.js';
import type { AddressHolder } from '../core/config/address-reuse.js';
import { DEFAULT_SELF_IDENTITY } from '../core/config/self-identity.js';
import { siteTextLimits } from '../core/config/text-guards.js';
import type { TimeWithWall } from '../core/time.js';
import type { Logger } from '../core/logger.js';
import type { ReloadCandidate, ReloadResult } from './gateway-handle.js';
import { RemoteSite } from './remote-site.js';
import type { SeedReading } from './remote-site-types.js';
import { SiteChanges } from './site-changes.js';
import { readSiteFile } from './site-file-reader.js';
import type { StartSite } from './site-store.js';

export interface SiteChangesWiring {
  start: StartSite;
  env: NodeJS.ProcessEnv;
  config: Config;
  current(): Config;
  reload(load: () => ReloadCandidate | Promise<ReloadCandidate>): Promise<ReloadResult>;
  addressHolders(): ReadonlyMap<string, AddressHolder>;
  busUp(name: string): boolean;
  linkUp(device: string): boolean;
  changed(): void;
  /** The seed file (`--config`): what `fieldgate reload` applies. */
  seedFile: string;
  time: TimeWithWall;
  log: Logger;
}

/** The seed's bytes, at most `maxBytes` (one more is read to tell a larger file). */
function readSeed(path: string, maxBytes: number): SeedReading {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    if (!fstatSync(fd).isFile()) return { path, issues: [{ path, message: 'is not a regular file' }] };
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (let n = 1; n > 0 && length < buffer.length; length += n) n = readSync(fd, buffer, length, buffer.length - length, null);
    if (length > maxBytes) return { path, issues: [{ path, message: `larger than ${maxBytes} bytes (FIELDGATE_SITE_MAX_BYTES)` }] };
    return { path, bytes: buffer.subarray(0, length) };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { path, issues: [{ path, message: code === 'ENOENT' ? 'file not found' : code === 'EACCES' ? 'permission denied' : `cannot read (${err instanceof Error ? err.message : String(err)})` }] };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export function createSiteChanges(w: SiteChangesWiring): SiteChanges {
  const settings = { ...DEFAULT_SELF_IDENTITY.site, ...w.config.gateway.cloud.identity?.site };
  const { maxBytes } = siteTextLimits(w.env, []);
  return new SiteChanges({
    store: w.start.store, book: w.start.book, startReason: w.start.reason, historyKept: settings.historyKept, current: w.current, reload: w.reload,
    readFile: (path) => readSiteFile(path, w.env), readSeed: () => readSeed(w.seedFile, maxBytes),
    addressHolders: w.addressHolders, busUp: w.busUp, linkUp: w.linkUp, time: w.time, log: w.log, changed: w.changed,
  });
}

export function createRemoteSite(changes: SiteChanges, config: Config, current: () => Config, env: NodeJS.ProcessEnv, time: TimeWithWall, log: Logger): RemoteSite {
  const settings = { ...DEFAULT_SELF_IDENTITY.site, ...config.gateway.cloud.identity?.site };
  return new RemoteSite({ changes, current, settings, maxBytes: siteTextLimits(env, []).maxBytes, time, log });
}
