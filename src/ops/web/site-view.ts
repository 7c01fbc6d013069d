// The site-file page: the running file shown with its secrets replaced by placeholders (the
// values stay on the server, per session, and go back in before anything is checked or written),
// an edited text checked the way a reload checks it (in the reload's reader: a worker or a few
// devices per turn, so polls keep their timing), and applied through the reload path.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import type { Config } from '../../core/config/config.js';
import type { ConfigIssue } from '../../core/config/issues.js';
import { siteConfigSecrets, siteRedaction, writtenSecrets, type Redacted, type SiteRedaction, type TextRedactor } from '../../core/config/site-redaction.js';
import { SITE_TEXT_DEFAULTS } from '../../core/config/text-guards.js';
import type { ReloadCandidate, ReloadResult } from '../gateway-handle.js';
import type { Logger } from '../log.js';
import { readText } from '../site-file.js';
import { readSiteFile } from '../site-file-reader.js';

/** Secrets shorter than this are left in place: too likely to stand for other text too. */
const MIN_HIDDEN = 4;
const PLACEHOLDER = /\{\{secret-(\d+)\}\}/g;

/** What the page must never show of a file: the config's secrets and every secret key's value as written, however short. */
export function secretsIn(text: string, config: Config): string[] {
  const known = siteConfigSecrets(config).filter((v) => v.length >= MIN_HIDDEN);
  // Longest first, so a secret containing another is hidden whole.
  return [...new Set([...known, ...writtenSecrets(text)])].filter((v) => v.length > 0 && text.includes(v)).sort((a, b) => b.length - a.length);
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
  /** The process's other known secrets (credentials fetched from the cloud). */
  knownSecrets?: TextRedactor;
}

/** Each secret replaced by `{{secret-N}}` (N: its place in `hidden`, from 1), in one pass over the text. */
export function hideSecrets(text: string, hidden: readonly string[]): string {
  if (hidden.length === 0) return text;
  // One pass: a placeholder put in is never searched again (a secret "1" must not hit "{{secret-1}}").
  const pattern = new RegExp(hidden.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
  return text.replace(pattern, (found) => `{{secret-${hidden.indexOf(found) + 1}}}`);
}

/** Only redacted text goes out: every answer is made by `SiteRedaction`. */
export type SiteAnswer = { ok: true; body: Redacted<Record<string, unknown>> } | { ok: false; status: number; error: Redacted<string> };

function answer(redaction: SiteRedaction, body: Record<string, unknown>): SiteAnswer {
  return { ok: true, body: redaction.json(body) };
}

function refusal(redaction: SiteRedaction, status: number, error: string): SiteAnswer {
  return { ok: false, status, error: redaction.text(error) };
}

export class SiteFileView {
  /** Per session: placeholder number -> secret, from the last time the file was shown to it. */
  private readonly secrets = new Map<string, string[]>();

  constructor(private readonly deps: SiteFileDeps) {}

  show(session: string): SiteAnswer {
    const read = readText(this.deps.path, SITE_TEXT_DEFAULTS);
    if (read.text === undefined) return refusal(this.redaction([]), 500, read.issues.map((i) => `${i.path}: ${i.message}`).join('; '));
    const hidden = secretsIn(read.text, this.deps.current());
    const text = hideSecrets(read.text, hidden);
    this.secrets.delete(session);
    while (this.secrets.size >= this.deps.maxSessions) this.secrets.delete(this.secrets.keys().next().value as string);
    this.secrets.set(session, hidden);
    return answer(this.redaction([read.text], hidden), { path: this.deps.path, text, hidden: hidden.length });
  }

  /** Problems of an edited text (every one with its path), nothing changed. */
  async check(session: string, edited: unknown): Promise<SiteAnswer> {
    const text = this.restore(session, edited);
    if (typeof text !== 'string') return text;
    const { issues, config } = await this.read(text);
    return answer(this.redaction([text], this.secrets.get(session), config), { valid: issues.length === 0, problems: issues });
  }

  /**
   * Knows every secret of the running config, of the texts (an edit, valid or not), of the
   * session's placeholders and of a submitted config that compiled: what a message may quote.
   */
  private redaction(texts: readonly string[], placeholders: readonly string[] = [], submitted?: Config): SiteRedaction {
    return siteRedaction({
      running: this.deps.current(), ...(submitted ? { submitted } : {}), texts, secrets: placeholders,
      ...(this.deps.knownSecrets ? { also: this.deps.knownSecrets } : {}),
    });
  }

  /** The edited text written over the site file, then the reload path: applied whole or refused whole. */
  async apply(session: string, edited: unknown): Promise<SiteAnswer> {
    const text = this.restore(session, edited);
    if (typeof text !== 'string') return text;
    const { issues, config } = await this.read(text);
    const redaction = this.redaction([text], this.secrets.get(session), config);
    if (issues.length > 0) return answer(redaction, { outcome: 'refused', problems: issues });
    const { path } = this.deps;
    let previous: Buffer;
    try {
      previous = readFileSync(path);
      this.replaceFile(text);
    } catch (err) {
      this.deps.log.warn({ err, path }, 'site file not written from the page');
      return refusal(redaction, 500, `cannot write ${path}: ${(err as Error).message}`);
    }
    const sha256 = digest(text);
    this.deps.log.info({ path, sha256 }, 'site file written from the page; reloading');
    const result = await this.deps.reload(() => this.readWritten(sha256));
    if (result.outcome === 'refused' || result.outcome === 'failed') return answer(redaction, { ...result, sha256, ...this.putBack(previous, sha256, result.outcome) });
    return answer(redaction, { ...result, sha256 });
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
    if (typeof edited !== 'string') return refusal(this.redaction([]), 400, 'text must be a string');
    const hidden = this.secrets.get(session) ?? [];
    let unknown: string | undefined;
    const text = edited.replace(PLACEHOLDER, (whole, n: string) => {
      const value = hidden[Number(n) - 1];
      if (value === undefined) unknown ??= whole;
      return value ?? whole;
    });
    if (unknown !== undefined) return refusal(this.redaction([edited], hidden), 400, `${unknown} is not a placeholder this page was given: open the site file again`);
    return text;
  }

  /** Checked by the reload's reader from a scratch copy; its name in problems becomes the site file's. */
  private async read(text: string): Promise<{ issues: ConfigIssue[]; config?: Config }> {
    const scratch = join(this.deps.scratchDir, `web-check-${randomBytes(6).toString('hex')}${extname(this.deps.path)}`);
    try {
      writeFileSync(scratch, text, { mode: 0o600 });
      const result = await readSiteFile(scratch, this.deps.env);
      const issues = result.issues.map((issue) => ({ path: issue.path.replaceAll(scratch, this.deps.path), message: issue.message.replaceAll(scratch, this.deps.path) }));
      return result.config ? { issues, config: result.config } : { issues };
    } catch (err) {
      return { issues: [{ path: this.deps.path, message: `could not be checked: ${(err as Error).message}` }] };
    } finally {
      rmSync(scratch, { force: true });
    }
  }
}

function digest(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}
