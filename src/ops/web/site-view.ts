// The site-file page: the running site shown with its secrets as placeholders (the same numbering
// the cloud's site_get gives; the values stay on the server, per session, and go back in before
// anything is checked or applied), an edited text checked the way a reload checks it (in the
// reload's reader: a worker or a few devices per turn, so polls keep their timing), and applied
// through the one path every change of the running site takes (ops/site-changes.ts): a new
// generation in the state directory, never a write of the seed file.
import type { Config } from '../../core/config/config.js';
import { restoreSiteSecrets } from '../../core/config/site-placeholders.js';
import { redactSiteText, siteRedaction, type Redacted, type SiteRedaction, type TextRedactor } from '../../core/config/site-redaction.js';
import type { Logger } from '../log.js';
import type { SiteChanges } from '../site-changes.js';

export interface SiteFileDeps {
  changes: SiteChanges;
  current(): Config;
  log: Logger;
  /** Sessions whose hidden secrets are kept at most (gateway.web.maxSessions, as the sessions). */
  maxSessions: number;
  /** The process's other known secrets (credentials fetched from the cloud). */
  knownSecrets?: TextRedactor;
}

/** Only redacted text goes out: every answer is made by `SiteRedaction`. */
export type SiteAnswer = { ok: true; body: Redacted<Record<string, unknown>> } | { ok: false; status: number; error: Redacted<string> };

/** What a session was shown: the running text's secrets in placeholder order, and that text's digest. */
interface Shown {
  secrets: string[];
  digest: string;
  text: string;
}

export class SiteFileView {
  private readonly shown = new Map<string, Shown>();

  constructor(private readonly deps: SiteFileDeps) {}

  show(session: string): SiteAnswer {
    let running: { text: string; digest: string };
    try {
      running = this.deps.changes.keeper.runningText();
    } catch (err) {
      return { ok: false, status: 500, error: this.redaction([]).text(err instanceof Error ? err.message : String(err)) };
    }
    const { text, secrets } = redactSiteText(running.text, this.deps.current());
    this.shown.delete(session);
    while (this.shown.size >= this.deps.maxSessions) this.shown.delete(this.shown.keys().next().value as string);
    this.shown.set(session, { secrets, digest: running.digest, text: running.text });
    const redaction = this.redaction([running.text], secrets);
    return { ok: true, body: redaction.json({ path: this.label(), text, hidden: secrets.length }) };
  }

  /** Problems of an edited text (every one with its path), nothing changed. */
  async check(session: string, edited: unknown): Promise<SiteAnswer> {
    const restored = this.restore(session, edited);
    if ('answer' in restored) return restored.answer;
    if (!restored.ok) return this.answer(restored.redaction, { valid: false, problems: restored.problems });
    const found = await this.deps.changes.check(restored.text, this.label(), false);
    return this.answer(restored.redaction, { valid: found.ok, problems: found.ok ? [] : found.problems });
  }

  /** A new generation from the edited text, through the reload path: applied whole or refused whole. */
  async apply(session: string, edited: unknown): Promise<SiteAnswer> {
    const restored = this.restore(session, edited);
    if ('answer' in restored) return restored.answer;
    if (!restored.ok) return this.answer(restored.redaction, { outcome: 'refused', problems: restored.problems });
    const base = this.shown.get(session)?.digest;
    const result = await this.deps.changes.apply({ text: restored.text, via: 'page', label: this.label(), ...(base ? { baseDigest: base } : {}) });
    const digest = result.outcome === 'applied' || result.outcome === 'awaiting_confirm' ? result.digest : undefined;
    const shown = this.shown.get(session);
    // The page still holds its text and placeholders: its next Apply starts from what it applied.
    if (digest && shown) this.shown.set(session, { ...shown, digest, text: restored.text });
    this.deps.log.info({ outcome: result.outcome, ...(digest ? { sha256: digest } : {}) }, 'site applied from the page');
    if (!result.reload) return this.answer(restored.redaction, { outcome: 'refused', problems: result.outcome === 'refused' ? result.problems : [] });
    const problems = result.outcome === 'refused' ? result.problems : [];
    return this.answer(restored.redaction, { outcome: result.reload.outcome, generation: result.reload.generation, problems, ...(digest ? { sha256: digest } : {}) });
  }

  /** The file problems and the page name: the running generation's text in the state directory. */
  private label(): string {
    return this.deps.changes.status().file;
  }

  private answer(redaction: SiteRedaction, body: Record<string, unknown>): SiteAnswer {
    return { ok: true, body: redaction.json(body) };
  }

  /**
   * Knows every secret of the running config, of the texts (an edit, valid or not) and of the
   * session's placeholders (each given back as its placeholder): what a message may quote.
   */
  private redaction(texts: readonly string[], placeholders: readonly string[] = []): SiteRedaction {
    return siteRedaction({ running: this.deps.current(), texts, placeholders, ...(this.deps.knownSecrets ? { also: this.deps.knownSecrets } : {}) });
  }

  /** The session's placeholders put back; a text that is not a string is a bad request. */
  private restore(session: string, edited: unknown): { answer: SiteAnswer } | { ok: true; text: string; redaction: SiteRedaction } | { ok: false; problems: unknown[]; redaction: SiteRedaction } {
    if (typeof edited !== 'string') return { answer: { ok: false, status: 400, error: this.redaction([]).text('text must be a string') } };
    const shown = this.shown.get(session);
    const secrets = shown?.secrets ?? [];
    const restored = restoreSiteSecrets(edited, secrets, this.label());
    const redaction = this.redaction([...(shown ? [shown.text] : []), restored.ok ? restored.text : edited], secrets);
    return restored.ok ? { ok: true, text: restored.text, redaction } : { ok: false, problems: restored.problems, redaction };
  }
}
