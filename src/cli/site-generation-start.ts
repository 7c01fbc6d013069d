// Which site text `run` starts with (docs/remote-config.md): the seed file given by --config, or
// the last confirmed generation of the state directory's store (every change of the running site,
// from the page, `fieldgate reload` or the cloud, is one); a generation that awaited confirmation
// when fieldgate stopped is rolled back here. Without a usable store the seed runs.
import { readFileSync } from 'node:fs';
import type { Config } from '../core/config/config.js';
import { formatIssue } from '../core/config/issues.js';
import type { Logger } from '../core/logger.js';
import { systemWallClock } from '../core/time.js';
import { openSiteGenerations, type StartSite } from '../ops/site-store.js';
import { readSiteForRun, type AddressNotes } from './site-loading.js';

export interface StartingSite {
  config: Config;
  sha256?: string;
  addresses?: AddressNotes;
  /** Absent: no store (the page's Apply and the site commands are off for this run; a reload applies the seed as it is). */
  generations?: StartSite;
}

/** `seed`: the seed file as `run` read it. Logs the choice once. */
export function startingSite(seedFile: string, seed: StartingSite, env: NodeJS.ProcessEnv, logger: Logger): StartingSite {
  let generations: StartSite;
  try {
    generations = openSiteGenerations(seedFile, readFileSync(seedFile), seed.config.gateway.stateDir, systemWallClock.wallNow());
  } catch (err) {
    logger.warn({ err, stateDir: seed.config.gateway.stateDir }, 'site generations not opened: the seed file runs, changes from the page and the cloud are off');
    return seed;
  }
  const { run, reason, rolledBack } = generations;
  if (rolledBack !== undefined) logger.warn({ generation: rolledBack, back: run.generation }, 'site generation awaiting confirmation at stop rolled back at start');
  logger.info({ generation: run.generation, file: generations.file, seed: seedFile, reason }, 'site generation running');
  if (run.digest === seed.sha256) return { ...seed, generations };
  const loaded = readSiteForRun(generations.file, env);
  if (!loaded.config) {
    logger.error({ generation: run.generation, file: generations.file, problems: loaded.issues.map(formatIssue) }, 'site generation does not load: the seed file runs, changes from the page and the cloud are off');
    return seed;
  }
  return { config: loaded.config, ...(loaded.sha256 ? { sha256: loaded.sha256 } : {}), ...(loaded.addresses ? { addresses: loaded.addresses } : {}), generations };
}
