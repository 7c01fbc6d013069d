// What the site changes (site-changes.ts) and the cloud's site commands (remote-site.ts) are built
// from: the store, the reload path, the reload's reader and the running parts, as ports (fakes in
// unit tests).
import type { Config } from '../core/config/config.js';
import type { AddressHolder } from '../core/config/address-reuse.js';
import type { SiteCommandSettings } from '../core/config/self-identity.js';
import type { GenerationBook } from '../core/config/site-generations.js';
import type { ConfigIssue } from '../core/config/site-types.js';
import type { TimeWithWall } from '../core/time.js';
import type { Logger } from '../core/logger.js';
import type { ReloadCandidate, ReloadResult } from './gateway-handle.js';
import type { SiteChanges } from './site-changes.js';

/** The store as the orchestrator uses it (site-store.ts; a fake in unit tests). */
export interface SiteStorePort {
  save(book: GenerationBook): void;
  textPath(generation: number): string;
  scratchPath(): string;
  writeText(generation: number, text: string | Buffer): void;
  readText(generation: number): string | undefined;
  removeText(generation: number): void;
  writeScratch(path: string, text: string): void;
  removeScratch(path: string): void;
}

export interface SiteReading {
  config?: Config;
  issues: readonly ConfigIssue[];
}

/** The seed file's bytes now (what `fieldgate reload` applies), or why it cannot be read. */
export type SeedReading = { path: string; bytes: Buffer } | { path: string; issues: ConfigIssue[] };

export interface SiteChangeDeps {
  store: SiteStorePort;
  book: GenerationBook;
  /** Why the running generation runs (from the start's choice). */
  startReason: string;
  /** Generations kept on disk (the running one and its predecessor always). */
  historyKept: number;
  current(): Config;
  /** The reload path: one at a time, applied whole or not at all. */
  reload(load: () => ReloadCandidate | Promise<ReloadCandidate>): Promise<ReloadResult>;
  /** A text file read and checked as a reload reads it (ops/site-file-reader.ts). */
  readFile(path: string): Promise<SiteReading>;
  readSeed(): SeedReading;
  addressHolders(): ReadonlyMap<string, AddressHolder>;
  /** Whether a bus is up, a device's own link is up. */
  busUp(name: string): boolean;
  linkUp(device: string): boolean;
  time: TimeWithWall;
  log: Logger;
  /** The site's state changed: the own attributes are due. */
  changed(): void;
}

export interface RemoteSiteDeps {
  changes: SiteChanges;
  current(): Config;
  settings: SiteCommandSettings;
  /** Largest text taken (the site file's own limit). */
  maxBytes: number;
  time: TimeWithWall;
  log: Logger;
}
