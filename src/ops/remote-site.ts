// Remote configuration (docs/remote-config.md): the site commands of fieldgate's own identity.
// A text is checked by the reload's own reader and planner, applied through the reload path (the
// difference only, whole or not at all) as a new generation of the store (site-store.ts), and
// rolled back by itself when it is not confirmed in time. One change at a time; every secret
// leaves as a placeholder (core/config/site-secrets.ts).
import { createHash } from 'node:crypto';
import { COMMAND_ERRORS, describeError, type CommandOutcome } from '../core/device-write-types.js';
import { noParams, parseApplyParams, parseGenerationParam, planSiteChange, planView, siteTextParam } from '../core/config/remote-site-rules.js';
import { redactIssues, redactSiteText } from '../core/config/site-secrets.js';
import {
  addGeneration, confirmGeneration, historyView, previousConfirmed, recordOf, rollBackGeneration, runningRecord, type GenerationVia,
} from '../core/config/site-generations.js';
import type { ConfigIssue } from '../core/config/site-types.js';
import type { MonoMs } from '../core/time.js';
import { TokenBucket } from '../cloud/forwarding/pacer.js';
import type { SiteStatus } from './status.js';
import { readCandidate, SITE_LABEL } from './remote-site-candidate.js';
import { GenerationKeeper } from './remote-site-keeper.js';
import type { RemoteSiteDeps } from './remote-site-types.js';

export type { RemoteSiteDeps, SiteReading, SiteStorePort } from './remote-site-types.js';

interface Awaiting {
  generation: number;
  back: number;
  watch: { buses: string[]; links: string[] };
  deadline: MonoMs;
  windowS: number;
  cancel(): void;
}

export const SITE_METHODS = ['site_get', 'site_check', 'site_apply', 'site_confirm', 'site_rollback', 'site_history'] as const;
/** Generations site_history lists. */
const HISTORY_SHOWN = 20;

const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');
const fail = (code: number, message: string): CommandOutcome => ({ ok: false, error: { code, message } });
const refused = (problems: readonly ConfigIssue[], extra: Record<string, unknown> = {}): CommandOutcome => ({ ok: true, result: { outcome: 'refused', problems: [...problems], ...extra } });

export class RemoteSite {
  private readonly keeper: GenerationKeeper;
  private awaiting: Awaiting | undefined;
  /** A change (apply, confirm, rollback) in progress: another is refused, not queued. */
  private changing = false;
  private checking = false;
  private lastRollback = '';
  private readonly bucket: TokenBucket;

  constructor(private readonly deps: RemoteSiteDeps) {
    this.keeper = new GenerationKeeper(deps.store, deps.book, deps.startReason, deps.settings.historyKept, deps.log);
    const perMinute = deps.settings.checksPerMinute;
    this.bucket = new TokenBucket(perMinute / 60, perMinute);
  }

  status(): SiteStatus {
    return { generation: this.keeper.book.running, state: this.awaiting ? 'awaiting_confirm' : 'confirmed', file: this.deps.store.textPath(this.keeper.book.running), reason: this.keeper.reason, lastRollback: this.lastRollback };
  }

  /** Never throws; unknown methods are the caller's. */
  async handle(method: string, params: Record<string, unknown>): Promise<CommandOutcome> {
    try {
      if (!this.changing) this.adoptBoxReload();
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

  /** Stops the confirmation timer (the window's generation is rolled back at the next start). */
  stop(): void {
    this.awaiting?.cancel();
  }

  /**
   * A reload on the box (`fieldgate reload`, the page's Apply) ran the seed file's text: it becomes
   * a generation of its own (via reload, confirmed; an open window ends with it), so site_get shows
   * what runs and a stale baseDigest is refused. A text that is neither is refused by staleIssue.
   */
  private adoptBoxReload(): void {
    const digest = this.deps.runningDigest();
    if (digest === runningRecord(this.keeper.book).digest) return;
    const seed = this.deps.readSeed();
    if (seed === undefined || sha256Hex(seed) !== digest) return;
    const generation = this.keeper.nextGeneration();
    this.deps.store.writeText(generation, seed);
    let book = this.keeper.book;
    const awaiting = this.awaiting;
    if (awaiting) {
      awaiting.cancel();
      this.awaiting = undefined;
      book = rollBackGeneration(book, awaiting.generation, book.running, 'replaced by a reload of the seed file on the box');
    }
    this.keeper.commit({ ...addGeneration(book, { digest, at: this.deps.time.wallNow(), via: 'reload' }).book, seedDigest: digest }, `generation ${generation}: the seed file, reloaded on the box`);
    this.deps.log.info({ generation, digest }, 'site reloaded on the box recorded as a generation');
    this.deps.changed();
  }

  private limited(): CommandOutcome | undefined {
    const waitMs = this.bucket.delayFor(this.deps.time.now());
    if (waitMs === 0) return undefined;
    return fail(COMMAND_ERRORS.busy, `rate limited: at most ${this.deps.settings.checksPerMinute} site checks, applies and rollbacks per minute; retry in ${Math.ceil(waitMs / 1000)} s`);
  }

  private get(params: Record<string, unknown>): CommandOutcome {
    const extra = noParams(params);
    if (extra) return fail(COMMAND_ERRORS.badParams, extra);
    const { text, digest } = this.keeper.runningText();
    const redacted = redactSiteText(text, this.deps.current());
    const status = this.status();
    return {
      ok: true,
      result: {
        text: redacted.text, digest, generation: status.generation, state: status.state, file: status.file, reason: status.reason, secrets: redacted.secrets.length,
        ...(this.awaiting ? { confirmBy: this.confirmByIso(this.awaiting) } : {}),
      },
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
      const found = await readCandidate(this.deps, this.keeper.runningText().text, text.value, undefined);
      if (!found.ok) return { ok: true, result: { valid: false, problems: found.problems } };
      return { ok: true, result: { valid: true, problems: [], plan: found.plan.ok ? planView(found.plan.plan) : {} } };
    } finally {
      this.checking = false;
    }
  }

  private busyRefusal(): ConfigIssue[] | undefined {
    if (this.changing) return [{ path: SITE_LABEL, message: 'another site change is in progress: nothing applied; get the site again once it ends' }];
    if (this.awaiting) return [{ path: SITE_LABEL, message: `generation ${this.awaiting.generation} awaits confirmation until ${this.confirmByIso(this.awaiting)}: confirm it or roll it back first; nothing applied` }];
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
    this.changing = true;
    try {
      const stale = this.staleIssue(baseDigest);
      if (stale) return refused([stale]);
      const generation = this.keeper.nextGeneration();
      const found = await readCandidate(this.deps, this.keeper.runningText().text, text, this.deps.store.textPath(generation));
      if (!found.ok || !found.plan.ok) {
        this.deps.store.removeText(generation);
        return refused(found.ok ? [] : found.problems);
      }
      if (found.plan.plan.identical) {
        this.deps.store.removeText(generation);
        return { ok: true, result: { outcome: 'unchanged', generation: this.keeper.book.running, problems: [] } };
      }
      const result = await this.deps.reload(() => {
        // A reload (a SIGHUP, the page) ran between the check and this turn: the base moved.
        const moved = this.staleIssue(baseDigest);
        return moved ? { issues: [moved] } : { config: found.config, sha256: sha256Hex(found.text), issues: [] };
      });
      if (result.outcome !== 'applied') {
        this.deps.store.removeText(generation);
        return refused(redactIssues(result.problems, found.secrets), { reload: result.outcome });
      }
      const back = this.keeper.book.running;
      const now = this.deps.time.wallNow();
      const confirmBy = confirmWithinS > 0 ? (now + confirmWithinS * 1000) as typeof now : undefined;
      this.keeper.commit(addGeneration(this.keeper.book, { digest: sha256Hex(found.text), at: now, via: 'remote', ...(confirmBy === undefined ? {} : { confirmBy }) }).book, `generation ${generation}, applied by site_apply`);
      const { watch } = found.plan;
      if (confirmWithinS > 0) this.awaitConfirmation(generation, back, watch, confirmWithinS);
      this.deps.log.info({ generation, back, confirmWithinS, plan: planView(found.plan.plan), watch }, confirmWithinS > 0 ? 'site generation applied, awaiting confirmation' : 'site generation applied');
      this.deps.changed();
      return {
        ok: true,
        result: {
          outcome: confirmWithinS > 0 ? 'awaiting_confirm' : 'applied', generation, digest: sha256Hex(found.text), plan: planView(found.plan.plan),
          ...(this.awaiting ? { confirmBy: this.confirmByIso(this.awaiting), mustComeUp: watch } : {}),
        },
      };
    } finally {
      this.changing = false;
    }
  }

  private staleIssue(baseDigest: string): ConfigIssue | undefined {
    const running = runningRecord(this.keeper.book);
    if (this.deps.runningDigest() !== running.digest) {
      return { path: SITE_LABEL, message: `the running site was changed on the box (sha256 ${this.deps.runningDigest()}) and is not generation ${running.generation}: nothing applied; get the site again` };
    }
    if (running.digest === baseDigest) return undefined;
    return { path: SITE_LABEL, message: `baseDigest is not the running site's (generation ${running.generation}, ${running.digest}): someone changed it meanwhile; get the site again; nothing applied` };
  }

  private confirmByIso(awaiting: Awaiting): string {
    return new Date(this.deps.time.wallNow() + Math.max(0, awaiting.deadline - this.deps.time.now())).toISOString();
  }

  private awaitConfirmation(generation: number, back: number, watch: Awaiting['watch'], windowS: number): void {
    const cancel = this.deps.time.setTimer(() => void this.onDeadline(generation), windowS * 1000);
    this.awaiting = { generation, back, watch, deadline: (this.deps.time.now() + windowS * 1000) as MonoMs, windowS, cancel };
  }

  /** Parts the generation changed that are not up (yet). */
  private notUp(awaiting: Awaiting): string[] {
    return [
      ...awaiting.watch.buses.filter((bus) => !this.deps.busUp(bus)).map((bus) => `bus ${bus}`),
      ...awaiting.watch.links.filter((device) => !this.deps.linkUp(device)).map((device) => `the cloud link of ${device}`),
    ];
  }

  private async onDeadline(generation: number): Promise<void> {
    const awaiting = this.awaiting;
    if (awaiting?.generation !== generation) return;
    if (this.changing) {
      // A rollback or confirm of this generation is running; it settles the window.
      this.deps.time.setTimer(() => void this.onDeadline(generation), 250);
      return;
    }
    const down = this.notUp(awaiting);
    const reason = `not confirmed within ${awaiting.windowS} s${down.length > 0 ? `; not up: ${down.join(', ')}` : ''}`;
    this.changing = true;
    try {
      await this.goBack(awaiting, reason);
    } finally {
      this.changing = false;
    }
  }

  /** The awaiting generation rolled back to the one before it (same number, same text, confirmed before). */
  private async goBack(awaiting: Awaiting, reason: string): Promise<boolean> {
    awaiting.cancel();
    const record = recordOf(this.keeper.book, awaiting.back);
    const text = this.deps.store.readText(awaiting.back);
    const reading = text === undefined ? undefined : await this.deps.readFile(this.deps.store.textPath(awaiting.back));
    const result = reading?.config
      ? await this.deps.reload(() => ({ config: reading.config, sha256: record?.digest ?? sha256Hex(text ?? ''), issues: [] }))
      : undefined;
    this.awaiting = undefined;
    if (result?.outcome !== 'applied') {
      const why = result ? result.problems.map((p) => p.message).join('; ') : `the text of generation ${awaiting.back} cannot be read`;
      this.deps.log.error({ generation: awaiting.generation, back: awaiting.back, reason, why }, 'site rollback failed: the generation stays; a restart rolls it back');
      return false;
    }
    this.keeper.commit(rollBackGeneration(this.keeper.book, awaiting.generation, awaiting.back, reason), `generation ${awaiting.back}: generation ${awaiting.generation} was rolled back (${reason})`);
    this.lastRollback = `generation ${awaiting.generation} rolled back to ${awaiting.back} at ${new Date(this.deps.time.wallNow()).toISOString()}: ${reason}`;
    this.deps.log.warn({ generation: awaiting.generation, back: awaiting.back, reason }, 'site generation rolled back');
    this.deps.changed();
    return true;
  }

  private confirm(params: Record<string, unknown>): CommandOutcome {
    const extra = noParams(params);
    if (extra) return fail(COMMAND_ERRORS.badParams, extra);
    const awaiting = this.awaiting;
    if (!awaiting || this.changing) {
      const last = [...this.keeper.book.records].reverse().find((r) => r.via === 'remote' || r.via === 'rollback');
      const why = this.changing ? 'a site change is in progress'
        : last?.outcome === 'rolled_back' ? `generation ${last.generation} was rolled back (${last.reason ?? 'no reason recorded'})`
          : `generation ${this.keeper.book.running} runs confirmed`;
      return refused([{ path: SITE_LABEL, message: `nothing awaits confirmation: ${why}` }], { generation: this.keeper.book.running });
    }
    const down = this.notUp(awaiting);
    if (down.length > 0) {
      return refused([{ path: SITE_LABEL, message: `not up yet: ${down.join(', ')}; confirm again once they are, or roll back (the window ends ${this.confirmByIso(awaiting)})` }], { generation: awaiting.generation });
    }
    awaiting.cancel();
    this.awaiting = undefined;
    this.keeper.commit(confirmGeneration(this.keeper.book, awaiting.generation), `generation ${awaiting.generation}, applied by site_apply and confirmed`);
    this.deps.log.info({ generation: awaiting.generation }, 'site generation confirmed');
    this.deps.changed();
    return { ok: true, result: { outcome: 'confirmed', generation: awaiting.generation } };
  }

  private async rollback(params: Record<string, unknown>): Promise<CommandOutcome> {
    const parsed = parseGenerationParam(params);
    if (!parsed.ok) return fail(COMMAND_ERRORS.badParams, parsed.message);
    if (this.changing) return refused([{ path: SITE_LABEL, message: 'another site change is in progress: nothing applied' }]);
    const target = recordOf(this.keeper.book, parsed.value);
    const known = this.keeper.book.records.map((r) => r.generation);
    if (!target) return refused([{ path: SITE_LABEL, message: `generation ${parsed.value} is not in the history (kept: ${known.join(', ')})` }]);
    if (target.generation === this.keeper.book.running && !this.awaiting) return refused([{ path: SITE_LABEL, message: `generation ${target.generation} is the one running` }]);
    const limited = this.limited();
    if (limited) return limited;
    this.changing = true;
    try {
      const awaiting = this.awaiting;
      if (awaiting && (target.generation === awaiting.back || previousConfirmed(this.keeper.book, awaiting.generation)?.generation === target.generation)) {
        const done = await this.goBack(awaiting, 'site_rollback');
        return done ? { ok: true, result: { outcome: 'rolled_back', generation: this.keeper.book.running } } : fail(COMMAND_ERRORS.internal, 'the rollback failed (see the log): the generation stays until a restart');
      }
      return await this.reapply(target.generation, awaiting);
    } finally {
      this.changing = false;
    }
  }

  /** An older generation's text applied again, as a new generation (via rollback), confirmed at once. */
  private async reapply(from: number, awaiting: Awaiting | undefined): Promise<CommandOutcome> {
    const text = this.deps.store.readText(from);
    if (text === undefined) return refused([{ path: SITE_LABEL, message: `the text of generation ${from} is no longer kept` }]);
    const generation = this.keeper.nextGeneration();
    this.deps.store.writeText(generation, text);
    const reading = await this.deps.readFile(this.deps.store.textPath(generation));
    const plan = reading.config ? planSiteChange(this.deps.current(), reading.config, this.deps.addressHolders()) : undefined;
    const { secrets } = redactSiteText(text, this.deps.current());
    if (!reading.config || !plan?.ok) {
      this.deps.store.removeText(generation);
      return refused(redactIssues(plan && !plan.ok ? plan.issues : reading.issues, secrets));
    }
    const digest = sha256Hex(text);
    const result = await this.deps.reload(() => ({ config: reading.config, sha256: digest, issues: [] }));
    if (result.outcome !== 'applied' && result.outcome !== 'unchanged') {
      this.deps.store.removeText(generation);
      return refused(redactIssues(result.problems, secrets), { reload: result.outcome });
    }
    awaiting?.cancel();
    this.awaiting = undefined;
    let book = this.keeper.book;
    if (awaiting) book = rollBackGeneration(book, awaiting.generation, book.running, `replaced by site_rollback to generation ${from}`);
    this.keeper.commit(addGeneration(book, { digest, at: this.deps.time.wallNow(), via: 'rollback' satisfies GenerationVia, from }).book, `generation ${generation}: generation ${from} again, by site_rollback`);
    this.lastRollback = `site_rollback to generation ${from} as generation ${generation} at ${new Date(this.deps.time.wallNow()).toISOString()}`;
    this.deps.log.warn({ generation, from }, 'site rolled back to an earlier generation');
    this.deps.changed();
    return { ok: true, result: { outcome: 'applied', generation, from } };
  }

  private history(params: Record<string, unknown>): CommandOutcome {
    const extra = noParams(params);
    if (extra) return fail(COMMAND_ERRORS.badParams, extra);
    return { ok: true, result: { running: this.keeper.book.running, generations: historyView(this.keeper.book, HISTORY_SHOWN) } };
  }
}
