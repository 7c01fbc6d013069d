// Loading a site file for the commands that run it (run, poll): issues printed, exit 78.
import { checkHost } from '../ops/host-checks.js';
import { ConfigError, loadConfig, loadConfigWithDigest } from '../ops/site-file.js';
import { formatIssue } from '../core/config/issues.js';
import type { Config } from '../core/config/config.js';
import type { ConfigIssue } from '../core/config/site-types.js';
import type { CliIo } from './io.js';

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

/** A site file read and checked as `run` does (host checks included), with its sha256; never throws ConfigError. */
export function readSiteForRun(file: string, env: NodeJS.ProcessEnv): { config?: Config; sha256?: string; issues: ConfigIssue[] } {
  try {
    const { config, sha256 } = loadConfigWithDigest(file, env, checkHost);
    return { config, sha256, issues: [] };
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
