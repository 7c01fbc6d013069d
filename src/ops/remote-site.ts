// Remote configuration (docs/remote-config.md): the site commands of fieldgate's own identity.
// Params, rate limits, placeholders and replies are here; every change goes through the one path
// the page and `fieldgate reload` take too (site-changes.ts), and every reply about a text passes
// the one redaction (core/config/site-redaction.ts).
import { COMMAND_ERRORS, describeError, type CommandOutcome } from '../core/device-write-types.js';
import { noParams, parseApplyParams, parseGenerationParam, planView, siteTextParam } from '../core/config/remote-site-rules.js';
import { redactSiteText } from '../core/config/site-redaction.js';
import { historyView } from '../core/config/site-generations.js';
import type { ConfigIssue } from '../core/config/site-types.js';
import { TokenBucket } from '../cloud/forwarding/pacer.js';
import type { SiteStatus } from './status.js';
import { restoreEdit, SITE_LABEL } from './remote-site-candidate.js';
import type { RemoteSiteDeps } from './remote-site-types.js';
import type { ChangeResult } from './site-changes.js';

export type { RemoteSiteDeps, SiteReading, SiteStorePort } from './remote-site-types.js';

export const SITE_METHODS = ['site_get', 'site_check', 'site_apply', 'site_confirm', 'site_rollback', 'site_history'] as const;
/** Generations site_history lists. */
const HISTORY_SHOWN = 20;

const fail = (code: number, message: string): CommandOutcome => ({ ok: false, error: { code, message } });
const refused = (problems: readonly unknown[], extra: Record<string, unknown> = {}): CommandOutcome => ({ ok: true, result: { outcome: 'refused', problems: [...problems], ...extra } });
const site = (message: string): ConfigIssue[] => [{ path: SITE_LABEL, message }];

export class RemoteSite {
  private checking = false;
  private readonly bucket: TokenBucket;

  constructor(private readonly deps: RemoteSiteDeps) {
    const perMinute = deps.settings.checksPerMinute;
    this.bucket = new TokenBucket(perMinute / 60, perMinute);
  }

  status(): SiteStatus {
    return this.deps.changes.status();
  }

  /** Never throws; unknown methods are the caller's. */
  async handle(method: string, params: Record<string, unknown>): Promise<CommandOutcome> {
    try {
      switch (method) {
        case 'site_get': return this.get(params);
        case 'site_check': return await this.check(params);
        case 'site_apply': return await this.apply(params);
        case 'site_confirm': return this.confirm(params);
        case 'site_rollback': return await this.rollback(params);
        case 'site_history': return this.history(params);
        default: return fail(COMMAND_ERRORS.unknownMethod, `unknown site method ${method}`);
      }
    } catch (err) {
      this.deps.log.error({ method, err }, 'site command failed unexpectedly');
      return fail(COMMAND_ERRORS.internal, describeError(err));
    }
  }

  private limited(): CommandOutcome | undefined {
    const waitMs = this.bucket.delayFor(this.deps.time.now());
    if (waitMs === 0) return undefined;
    return fail(COMMAND_ERRORS.busy, `rate limited: at most ${this.deps.settings.checksPerMinute} site checks, applies and rollbacks per minute; retry in ${Math.ceil(waitMs / 1000)} s`);
  }

  private running(): { text: string; config: ReturnType<RemoteSiteDeps['current']> } {
    return { text: this.deps.changes.keeper.runningText().text, config: this.deps.current() };
  }

  private get(params: Record<string, unknown>): CommandOutcome {
    const extra = noParams(params);
    if (extra) return fail(COMMAND_ERRORS.badParams, extra);
    const { changes } = this.deps;
    const { text, digest } = changes.keeper.runningText();
    const shown = redactSiteText(text, this.deps.current());
    const status = changes.status();
    const confirmBy = changes.window.confirmByIso();
    return {
      ok: true,
      result: { text: shown.text, digest, generation: status.generation, state: status.state, file: status.file, reason: status.reason, secrets: shown.secrets.length, ...(confirmBy ? { confirmBy } : {}) },
    };
  }

  private async check(params: Record<string, unknown>): Promise<CommandOutcome> {
    const text = siteTextParam(params, this.deps.maxBytes, ['text']);
    if (!text.ok) return fail(COMMAND_ERRORS.badParams, text.message);
    if (this.checking) return fail(COMMAND_ERRORS.busy, 'a site_check is running: one at a time');
    const limited = this.limited();
    if (limited) return limited;
    this.checking = true;
    try {
      const edit = restoreEdit(this.running(), text.value, SITE_LABEL);
      if (!edit.ok) return { ok: true, result: { valid: false, problems: edit.redaction.json(edit.problems) } };
      const found = await this.deps.changes.check(edit.text, SITE_LABEL, true);
      if (!found.ok) return { ok: true, result: { valid: false, problems: edit.redaction.json(found.problems) } };
      return { ok: true, result: { valid: true, problems: [], plan: planView(found.plan) } };
    } finally {
      this.checking = false;
    }
  }

  /** Refused before a token is spent: another change runs, or a generation awaits confirmation. */
  private busyRefusal(): ConfigIssue[] | undefined {
    const { changes } = this.deps;
    if (changes.busy()) return site('another site change is in progress: nothing applied; get the site again once it ends');
    const open = changes.window.current();
    if (open) return site(`generation ${open.generation} awaits confirmation until ${changes.window.confirmByIso()}: confirm it or roll it back first; nothing applied`);
    return undefined;
  }

  private async apply(params: Record<string, unknown>): Promise<CommandOutcome> {
    const parsed = parseApplyParams(params, this.deps.maxBytes, this.deps.settings.confirmMaxS);
    if (!parsed.ok) return fail(COMMAND_ERRORS.badParams, parsed.message);
    const busy = this.busyRefusal();
    if (busy) return refused(busy);
    const limited = this.limited();
    if (limited) return limited;
    const { text, baseDigest, confirmWithinS } = parsed.value;
    const edit = restoreEdit(this.running(), text, SITE_LABEL);
    if (!edit.ok) return refused(edit.redaction.json(edit.problems));
    const result = await this.deps.changes.apply({ text: edit.text, via: 'remote', baseDigest, confirmWithinS, label: SITE_LABEL });
    return this.reply(result, (problems) => edit.redaction.json(problems));
  }

  private reply(result: ChangeResult, redact: (problems: ConfigIssue[]) => unknown[]): CommandOutcome {
    if (result.outcome === 'refused') return refused(redact(result.problems), result.reload ? { reload: result.reload.outcome } : {});
    if (result.outcome === 'unchanged') return { ok: true, result: { outcome: 'unchanged', generation: result.generation, problems: [] } };
    const confirmBy = this.deps.changes.window.confirmByIso();
    return {
      ok: true,
      result: {
        outcome: result.outcome, generation: result.generation, digest: result.digest, ...(result.plan ? { plan: planView(result.plan) } : {}),
        ...(result.outcome === 'awaiting_confirm' && confirmBy ? { confirmBy, mustComeUp: result.watch } : {}),
      },
    };
  }

  private confirm(params: Record<string, unknown>): CommandOutcome {
    const extra = noParams(params);
    if (extra) return fail(COMMAND_ERRORS.badParams, extra);
    const confirmed = this.deps.changes.confirm();
    if (!confirmed.ok) return refused(site(confirmed.message), { generation: confirmed.generation });
    return { ok: true, result: { outcome: 'confirmed', generation: confirmed.generation } };
  }

  private async rollback(params: Record<string, unknown>): Promise<CommandOutcome> {
    const parsed = parseGenerationParam(params);
    if (!parsed.ok) return fail(COMMAND_ERRORS.badParams, parsed.message);
    const { changes } = this.deps;
    if (changes.busy()) return refused(site('another site change is in progress: nothing applied'));
    const known = changes.keeper.book.records.map((r) => r.generation);
    if (!known.includes(parsed.value)) return refused(site(`generation ${parsed.value} is not in the history (kept: ${known.join(', ')})`));
    const limited = this.limited();
    if (limited) return limited;
    const result = await changes.rollback(parsed.value);
    if (result.outcome === 'rolled_back') return { ok: true, result: { outcome: 'rolled_back', generation: result.generation } };
    if (result.outcome === 'failed') return fail(COMMAND_ERRORS.internal, result.message);
    const redaction = restoreEdit(this.running(), '', SITE_LABEL).redaction;
    const reply = this.reply(result, (problems) => redaction.json(problems));
    if (result.outcome === 'applied') return { ok: true, result: { outcome: 'applied', generation: result.generation, from: parsed.value } };
    return reply;
  }

  private history(params: Record<string, unknown>): CommandOutcome {
    const extra = noParams(params);
    if (extra) return fail(COMMAND_ERRORS.badParams, extra);
    const { book } = this.deps.changes.keeper;
    return { ok: true, result: { running: book.running, generations: historyView(book, HISTORY_SHOWN) } };
  }
}
