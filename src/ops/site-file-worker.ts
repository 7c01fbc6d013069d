// Runs in a worker thread: reads and checks a site file as `run` does (host checks included) and
// posts the plain result back, so a reload never holds the daemon's event loop while YAML is
// parsed and validated. Codecs (functions) cannot cross threads: the caller compiles the site.
import { parentPort, workerData } from 'node:worker_threads';
import { checkHost } from './host-checks.js';
import { ConfigError, loadConfigWithDigest } from './site-file.js';
import type { SiteFileReading } from './site-file-reader.js';

const { file, env } = workerData as { file: string; env: NodeJS.ProcessEnv };
let reading: SiteFileReading;
try {
  const { config, sha256 } = loadConfigWithDigest(file, env, checkHost);
  reading = { gateway: config.gateway, site: config.site, ...(config.profileOverrides ? { profileOverrides: config.profileOverrides } : {}), sha256, issues: [] };
} catch (err) {
  reading = { issues: err instanceof ConfigError ? [...err.issues] : [{ path: file, message: `cannot be checked: ${err instanceof Error ? err.message : String(err)}` }] };
}
parentPort?.postMessage(reading);
