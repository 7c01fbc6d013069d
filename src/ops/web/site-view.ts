// The site-file page: the running file shown with its secrets replaced by placeholders (the
// values stay on the server, per session, and go back in before anything is checked or written),
// an edited text checked the way a reload checks it (in the reload's reader: a worker or a few
// devices per turn, so polls keep their timing), and applied through the reload path.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import type { Config } from '../../core/config/config.js';
import type { ConfigIssue } from '../../core/config/issues.js';
import { configSecrets } from '../../core/config/secret-values.js';
import { SITE_TEXT_DEFAULTS } from '../../core/config/text-guards.js';
import type { ReloadCandidate, ReloadResult } from '../gateway-handle.js';
import type { Logger } from '../log.js';
import { readText } from '../site-file.js';
import { readSiteFile } from '../site-file-reader.js';

/** Secrets shorter than this are left in place: too likely to stand for other text too. */
const MIN_HIDDEN = 4;
const PLACEHOLDER = /\{\{secret-(\d+)\}\}/g;
/** A secret key's value as written (quoted or bare), however short, and whether or not the config kept it. */
const SECRET_KEY_VALUE = /\b(?:accessToken|projectKey|accessKey|secretKey|passwordHash)\s*:\s*("(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[^\s,}\]#]+)/g;

/** What the page must never show of a file: the config's secrets and every secret key's value. */
export function secretsIn(text: string, config: Config): string[] {
  const identity = config.gateway.cloud.identity as { accessToken?: string; projectKey?: string } | undefined;
  const known = [...configSecrets(config), identity?.accessToken ?? '', identity?.projectKey ?? '', config.gateway.web?.passwordHash ?? ''].filter((v) => v.length >= MIN_HIDDEN);
  const written = [...text.matchAll(SECRET_KEY_VALUE)].map((m) => m[1]);
  // Longest first, so a secret containing another is hidden whole.
  return [...new Set([...known, ...written])].filter((v) => v.length > 0 && text.includes(v)).sort((a, b) => b.length - a.length);
}

export interface SiteFileDeps {
  path: string;
  env: NodeJS.ProcessEnv;
  current(): Config;
  /** Where a text being checked is written for the reader (the state directory). */
  scratchDir: string;
  reload(load: () => Promise<ReloadCandidate>): Promise<ReloadResult>;
  log: Logger;
  /** Sessions whose hidden secrets are kept at most (gateway.web.maxSessions, as the sessions). */
  maxSessions: number;
}

/** Each secret replaced by `{{secret-N}}` (N: its place in `hidden`, from 1), in one pass over the text. */
export function hideSecrets(text: string, hidden: readonly string[]): string {
  if (hidden.length === 0) return text;
  // One pass: a placeholder put in is never searched again (a secret "1" must not hit "{{secret-1}}").
  const pattern = new RegExp(hidden.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
  return text.replace(pattern, (found) => `{{secret-${hidden.indexOf(found) + 1}}}`);
}

export type SiteAnswer = { ok: true; body: Record<string, unknown> } | { ok: false; status: number; error: string };

export class SiteFileView {
  /** Per session: placeholder number -> secret, from the last time the file was shown to it. */
  private readonly secrets = new Map<string, string[]>();

  constructor(private readonly deps: SiteFileDeps) {}

  show(session: string): SiteAnswer {
    const read = readText(this.deps.path, SITE_TEXT_DEFAULTS);
    if (read.text === undefined) return { ok: false, status: 500, error: read.issues.map((i) => `${i.path}: ${i.message}`).join('; ') };
    const hidden = secretsIn(read.text, this.deps.current());
    const text = hideSecrets(read.text, hidden);
    this.secrets.delete(session);
    while (this.secrets.size >= this.deps.maxSessions) this.secrets.delete(this.secrets.keys().next().value as string);
    this.secrets.set(session, hidden);
    return { ok: true, body: { path: this.deps.path, text, hidden: hidden.length } };
  }

  /** Problems of an edited text (every one with its path), nothing changed. */
  async check(session: string, edited: unknown): Promise<SiteAnswer> {
    const text = this.restore(session, edited);
    if (typeof text !== 'string') return text;
    const issues = await this.read(text);
    return { ok: true, body: { valid: issues.length === 0, problems: issues } };
  }

  /** The edited text written over the site file, then the reload path: applied whole or refused whole. */
  async apply(session: string, edited: unknown): Promise<SiteAnswer> {
    const text = this.restore(session, edited);
    if (typeof text !== 'string') return text;
    const issues = await this.read(text);
    if (issues.length > 0) return { ok: true, body: { outcome: 'refused', problems: issues } };
    const { path } = this.deps;
    let previous: Buffer;
    try {
      previous = readFileSync(path);
      this.replaceFile(text);
    } catch (err) {
      this.deps.log.warn({ err, path }, 'site file not written from the page');
      return { ok: false, status: 500, error: `cannot write ${path}: ${(err as Error).message}` };
    }
    const sha256 = digest(text);
    this.deps.log.info({ path, sha256 }, 'site file written from the page; reloading');
    const result = await this.deps.reload(() => this.readWritten(sha256));
    if (result.outcome === 'refused' || result.outcome === 'failed') return { ok: true, body: { ...result, sha256, ...this.putBack(previous, sha256, result.outcome) } };
    return { ok: true, body: { ...result, sha256 } };
  }

  /**
   * A reload refused after the page wrote the file (a key that needs a restart, say) leaves the
   * daemon on the old config: the file goes back to it too, or the next restart would apply what
   * the page was told was not applied. A file someone else changed meanwhile is theirs and stays.
   */
  private putBack(previous: Buffer, written: string, outcome: string): { fileRestored: boolean } {
    const { path, log } = this.deps;
    try {
      if (digest(readFileSync(path)) !== written) {
        log.warn({ path, outcome }, 'site file changed by someone else after the page wrote it; left as it is');
        return { fileRestored: false };
      }
      this.replaceFile(previous);
      log.warn({ path, outcome, sha256: digest(previous) }, 'reload from the page not applied; site file put back as it was');
      return { fileRestored: true };
    } catch (err) {
      log.error({ err, path, outcome }, 'reload from the page not applied and the site file could not be put back; it differs from the running config');
      return { fileRestored: false };
    }
  }

  /** Written beside the file and renamed over it: a reader never sees half a file. */
  private replaceFile(content: string | Buffer): void {
    const { path } = this.deps;
    const temp = join(dirname(path), `.${basename(path)}.web-${randomBytes(6).toString('hex')}`);
    try {
      writeFileSync(temp, content, { mode: 0o640, flag: 'wx' });
      renameSync(temp, path);
    } catch (err) {
      rmSync(temp, { force: true });
      throw err;
    }
  }

  /**
   * The site file as the reload reads it, refused whole unless it is the text the page wrote: a
   * file rewritten in place meanwhile (another editor, a deployment) can be read cut short and
   * still be valid, and applying it would remove devices nobody asked to remove.
   */
  private async readWritten(written: string): Promise<ReloadCandidate> {
    const { path, env } = this.deps;
    const read = await readSiteFile(path, env);
    // A file with problems is refused for them; a valid one only if it is the page's text.
    if (!read.config || read.sha256 === written) return read;
    return {
      ...(read.sha256 ? { sha256: read.sha256 } : {}),
      issues: [{ path, message: `changed after the page wrote it (read sha256 ${read.sha256 ?? 'unknown'}, written ${written}): nothing applied; open the site file again` }],
    };
  }

  private restore(session: string, edited: unknown): string | SiteAnswer {
    if (typeof edited !== 'string') return { ok: false, status: 400, error: 'text must be a string' };
    const hidden = this.secrets.get(session) ?? [];
    let unknown: string | undefined;
    const text = edited.replace(PLACEHOLDER, (whole, n: string) => {
      const value = hidden[Number(n) - 1];
      if (value === undefined) unknown ??= whole;
      return value ?? whole;
    });
    if (unknown !== undefined) return { ok: false, status: 400, error: `${unknown} is not a placeholder this page was given: open the site file again` };
    return text;
  }

  /** Checked by the reload's reader from a scratch copy; its name in problems becomes the site file's. */
  private async read(text: string): Promise<ConfigIssue[]> {
    const scratch = join(this.deps.scratchDir, `web-check-${randomBytes(6).toString('hex')}${extname(this.deps.path)}`);
    try {
      writeFileSync(scratch, text, { mode: 0o600 });
      const result = await readSiteFile(scratch, this.deps.env);
      return result.issues.map((issue) => ({ path: issue.path.replaceAll(scratch, this.deps.path), message: issue.message.replaceAll(scratch, this.deps.path) }));
    } catch (err) {
      return [{ path: this.deps.path, message: `could not be checked: ${(err as Error).message}` }];
    } finally {
      rmSync(scratch, { force: true });
    }
  }
}

function digest(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}
