// Loading a site file for the commands that run it (run, poll): issues printed, exit 78.
import { checkHost } from '../ops/host-checks.js';
import { ConfigError, loadConfig, loadConfigWithDigest } from '../ops/site-file.js';
import { formatIssue } from '../core/config/issues.js';
import type { Config } from '../core/config/config.js';
import type { ConfigIssue } from '../core/config/site-types.js';
import type { CliIo } from './io.js';
import type { Logger } from '../core/logger.js';
import { pinFromStateDir, type AnnouncedSource } from '../ops/sub-device-record.js';

/** How the sub-device addresses were settled at start, for the daemon's log. */
export interface AddressNotes {
  source: AnnouncedSource;
  taken: number;
  changed: Array<{ device: string; from: string; to: string }>;
}

/** Former profile point ids the site file still names (the point vocabulary renamed them): one warning each, at start. */
export function logRenamedPoints(config: Config, logger: Logger): void {
  for (const device of config.site.devices) {
    for (const { profile, formerly, now, path } of device.renamedPoints ?? []) {
      logger.warn({ device: device.name, profile, formerly, now, path }, 'site file names a renamed profile point: read as its new id for this release');
    }
  }
}

export function logAddressNotes(notes: AddressNotes | undefined, logger: Logger): void {
  if (notes?.source === 'previous-version') logger.info({ devices: notes.taken }, 'sub-device addresses taken over from the previous version');
  for (const change of notes?.changed ?? []) logger.info(change, 'sub-device address changed by the site file');
}

/** The config, or undefined after printing every issue to stderr. `host`: also check the CA file and state directory. */
export function loadSiteOrReport(file: string, io: CliIo, command: string, options: { host?: boolean } = {}): Config | undefined {
  try {
    return loadConfig(file, io.env, options.host ? checkHost : undefined);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    reportIssues(err.issues, file, io, command, 'nothing started');
    return undefined;
  }
}

/**
 * A site file read and checked as `run` does (host checks included, every sub-device keeping the
 * address its state directory announced), with its sha256; never throws ConfigError.
 */
export function readSiteForRun(file: string, env: NodeJS.ProcessEnv): { config?: Config; sha256?: string; issues: ConfigIssue[]; addresses?: AddressNotes } {
  try {
    const { config: loaded, sha256 } = loadConfigWithDigest(file, env, checkHost);
    const { config, issues, changed, announced } = pinFromStateDir(loaded);
    return { ...(config ? { config } : {}), sha256, issues, addresses: { source: announced?.source ?? 'none', taken: announced?.addresses.size ?? 0, changed } };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { issues: [...err.issues] };
  }
}

/** Prints every issue of a refused site file to stderr. */
export function reportIssues(issues: readonly ConfigIssue[], file: string, io: CliIo, command: string, outcome: string): void {
  for (const issue of issues) io.stderr.write(`${formatIssue(issue)}\n`);
  io.stderr.write(`fieldgate ${command}: ${file}: ${issues.length} problem(s); ${outcome}\n`);
}
