// A site file read and checked without holding the event loop, as a reload reads it: a plainly laid
// out YAML file a few devices per turn on this thread (site-file-sliced.ts, no second V8 instance),
// anything else in a worker thread (site-file-worker.ts) and compiled here. Polls and links keep
// their timing while a large file is parsed. Same checks, same environment overrides as at start-up.
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Config } from '../core/config/config.js';
import type { ConfigIssue, GatewaySettings, ProfileOverride, SiteConfig } from '../core/config/site-types.js';
import { checkHost } from './host-checks.js';
import { ConfigError, compiledConfig } from './site-file.js';
import { readSiteInSlices } from './site-file-sliced.js';

/** What the worker posts back: plain data only. */
export interface SiteFileReading {
  gateway?: GatewaySettings;
  site?: SiteConfig;
  profileOverrides?: ProfileOverride[];
  sha256?: string;
  issues: ConfigIssue[];
}

// The worker's file has this file's extension: .js when built, .ts when run from source (tsx).
const WORKER = new URL(`./site-file-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);

/** The process's loader flags (tsx from source: `--import`, `--conditions`); V8 flags are not allowed in a worker. */
function workerExecArgv(): string[] {
  const args: string[] = [];
  const argv = process.execArgv;
  for (let i = 0; i < argv.length; i += 1) {
    if ((argv[i] === '--import' || argv[i] === '--conditions') && argv[i + 1] !== undefined) args.push(argv[i], argv[(i += 1)]);
    else if (argv[i].startsWith('--import=') || argv[i].startsWith('--conditions=')) args.push(argv[i]);
  }
  return args;
}

function inWorker(file: string, env: NodeJS.ProcessEnv): Promise<SiteFileReading> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (reading: SiteFileReading) => {
      if (settled) return;
      settled = true;
      resolve(reading);
    };
    const workerData = { file, env: { ...env } };
    // From source (tests, development) the worker is TypeScript: tsx loads it as it loads the rest.
    const worker = WORKER.pathname.endsWith('.ts')
      ? new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER.href)}); });`, { eval: true, workerData, execArgv: workerExecArgv() })
      : new Worker(WORKER, { workerData });
    worker.once('message', (reading: SiteFileReading) => {
      done(reading);
      // The worker ends by itself once its loop is empty; terminating it here would cut off its
      // pending file writes (tsx's cache from source) and, on Node 24, leak their descriptors in
      // this process. Unref'd so a finishing reader never holds a shutdown.
      worker.unref();
    });
    worker.once('error', (err) => done({ issues: [{ path: file, message: `cannot be checked: ${err.message}` }] }));
    worker.once('exit', (code) => done({ issues: [{ path: file, message: `cannot be checked: the reader stopped (exit ${code})` }] }));
  });
}

/** The site file's config (compiled) with its sha256, or every problem found; never throws. */
export async function readSiteFile(file: string, env: NodeJS.ProcessEnv): Promise<{ config?: Config; sha256?: string; issues: ConfigIssue[] }> {
  const sliced = await readSiteInSlices(file, env, checkHost);
  if (sliced) return sliced;
  const reading = await inWorker(file, env);
  if (!reading.gateway || !reading.site || reading.issues.length > 0) return { issues: reading.issues };
  try {
    const config = compiledConfig(reading.gateway, reading.site);
    return { config: reading.profileOverrides ? { ...config, profileOverrides: reading.profileOverrides } : config, ...(reading.sha256 ? { sha256: reading.sha256 } : {}), issues: [] };
  } catch (err) {
    if (err instanceof ConfigError) return { issues: [...err.issues] };
    throw err;
  }
}
