// The site generations on disk: `<stateDir>/site/` holds each applied generation's text
// (`generation-N.yaml`, mode 0600: it holds secrets) and the book (`generations.json`,
// core/config/site-generations.ts). The service may write there under ProtectSystem=strict; the
// seed file (/etc/fieldgate/site.yaml) stays the operator's and is only read: `fieldgate reload`
// and a start after it was edited take it in as a new generation.
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { chooseAtStart, parseBook, type GenerationBook, type StartChoice } from '../core/config/site-generations.js';
import type { Config } from '../core/config/config.js';
import type { Logger } from '../core/logger.js';
import { systemWallClock, type EpochMs } from '../core/time.js';

export const SITE_STORE_DIR = 'site';
const BOOK_FILE = 'generations.json';

export function sha256Of(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

/** Written beside and renamed over: a reader (a start after a crash) never sees half a file. */
function replaceFile(path: string, content: string | Buffer): void {
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    writeFileSync(temporary, content, { mode: 0o600, flag: 'wx' });
    renameSync(temporary, path);
  } catch (err) {
    rmSync(temporary, { force: true });
    throw err;
  }
}

export class SiteStore {
  readonly dir: string;

  /** `extension`: the seed's (.yaml or .json), so a generation is read as the seed is. */
  constructor(stateDir: string, private readonly extension: string) {
    this.dir = join(stateDir, SITE_STORE_DIR);
  }

  static forSeed(stateDir: string, seedFile: string): SiteStore {
    return new SiteStore(stateDir, extname(seedFile) || '.yaml');
  }

  textPath(generation: number): string {
    return join(this.dir, `generation-${generation}${this.extension}`);
  }

  /** A scratch file for a text being checked (removed by the caller). */
  scratchPath(): string {
    return join(this.dir, `check-${randomBytes(6).toString('hex')}${this.extension}`);
  }

  /** The book, or undefined when there is none or it cannot be read (then the seed runs, and says so). */
  load(): GenerationBook | undefined {
    try {
      return parseBook(JSON.parse(readFileSync(join(this.dir, BOOK_FILE), 'utf8')));
    } catch {
      return undefined;
    }
  }

  save(book: GenerationBook): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    replaceFile(join(this.dir, BOOK_FILE), `${JSON.stringify(book)}\n`);
  }

  writeText(generation: number, text: string | Buffer): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    replaceFile(this.textPath(generation), text);
  }

  readText(generation: number): string | undefined {
    try {
      return readFileSync(this.textPath(generation), 'utf8');
    } catch {
      return undefined;
    }
  }

  /** A text being checked, where the reader can read it. */
  writeScratch(path: string, text: string): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    writeFileSync(path, text, { mode: 0o600 });
  }

  removeScratch(path: string): void {
    rmSync(path, { force: true });
  }

  removeText(generation: number): void {
    rmSync(this.textPath(generation), { force: true });
  }
}

export interface StartSite extends StartChoice {
  /** The file that runs: the seed, or a generation's text in the store. */
  file: string;
  store: SiteStore;
}

/**
 * At start: which text runs (core chooseAtStart), the book written back (a generation that awaited
 * confirmation is rolled back now), the seed copied in when it runs. A generation whose text is
 * missing or changed on disk is not run: the seed runs instead, and the reason says so.
 */
export function openSiteGenerations(seedFile: string, seedBytes: Buffer, stateDir: string, now: EpochMs): StartSite {
  const store = SiteStore.forSeed(stateDir, seedFile);
  const seedDigest = sha256Of(seedBytes);
  let choice = chooseAtStart(store.load(), seedDigest, now);
  if (choice.run.via !== 'seed' || choice.run.digest !== seedDigest) {
    const text = store.readText(choice.run.generation);
    if (text === undefined || sha256Of(text) !== choice.run.digest) {
      const fresh = chooseAtStart(undefined, seedDigest, now);
      choice = { ...fresh, reason: `the seed file: the text of generation ${choice.run.generation} is missing or damaged in ${store.dir}` };
    }
  }
  if (choice.run.digest === seedDigest && sha256Of(store.readText(choice.run.generation) ?? '') !== seedDigest) store.writeText(choice.run.generation, seedBytes);
  store.save(choice.book);
  return { ...choice, file: store.textPath(choice.run.generation), store };
}

/**
 * The store of a gateway started in-process with a seed file but no start choice (tests,
 * benches): opened here, used only if it runs the text the gateway was started with. `null` in
 * deps: `run` tried and could not open it (said once there).
 */
export function siteGenerationsFor(deps: { siteGenerations?: StartSite | null; siteFile?: string; configSha256?: string }, config: Config, logger: Logger): StartSite | undefined {
  if (deps.siteGenerations !== undefined) return deps.siteGenerations ?? undefined;
  if (deps.siteFile === undefined) return undefined;
  try {
    const start = openSiteGenerations(deps.siteFile, readFileSync(deps.siteFile), config.gateway.stateDir, systemWallClock.wallNow());
    if (start.run.digest === deps.configSha256) return start;
    logger.warn({ generation: start.run.generation, file: start.file, seed: deps.siteFile }, 'site generations do not run the text started with: changes of the running site are off');
  } catch (err) {
    logger.warn({ err, stateDir: config.gateway.stateDir }, 'site generations not opened: changes of the running site are off');
  }
  return undefined;
}
