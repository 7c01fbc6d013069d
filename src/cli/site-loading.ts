// Loading a site file for the commands that run it (run, poll): issues printed, exit 78.
import { checkHost } from '../ops/host-checks.js';
import { ConfigError, loadConfig } from '../ops/site-file.js';
import { formatIssue } from '../core/config/issues.js';
import type { Config } from '../core/config/config.js';
import type { CliIo } from './io.js';

/** The config, or undefined after printing every issue to stderr. `host`: also check the CA file and state directory. */
export function loadSiteOrReport(file: string, io: CliIo, command: string, options: { host?: boolean } = {}): Config | undefined {
  try {
    return loadConfig(file, io.env, options.host ? checkHost : undefined);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const issue of err.issues) io.stderr.write(`${formatIssue(issue)}\n`);
    io.stderr.write(`fieldgate ${command}: ${file}: ${err.issues.length} problem(s); nothing started\n`);
    return undefined;
  }
}
