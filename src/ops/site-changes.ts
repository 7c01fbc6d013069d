// The one way the running site changes (docs/remote-config.md): the page's Apply, `fieldgate
// reload` (the seed file read again), the cloud's site_apply and site_rollback. Each text becomes
// generation N of the store (site-store.ts), is read by the reload's own reader from there,
// planned by the reload's planner, applied through the reload queue (the difference only, whole
// or not at all) and recorded in the book with how it came. One change at a time: the box's
// (page, reload) wait their turn, the cloud's are refused while one runs; a remote change may
// await confirmation (confirmation-window.ts) and goes back by itself when none comes.
import { planSiteChange } from '../core/config/remote-site-rules.js';
import {
  addGeneration, confirmGeneration, previousConfirmed, recordOf, rollBackGeneration, runningRecord, type GenerationVia,
} from '../core/config/site-generations.js';
import type { ReloadPlan } from '../core/config/site-diff.js';
import type { ConfigIssue } from '../core/config/site-types.js';
import { ConfirmationWindow, type OpenWindow, type PartsToWatch } from './confirmation-window.js';
import type { ReloadResult } from './gateway-handle.js';
import { GenerationKeeper } from './remote-site-keeper.js';
import type { SiteChangeDeps, SiteReading } from './remote-site-types.js';
import { sha256Of } from './site-store.js';
import type { SiteStatus } from './status.js';

export type ChangeVia = Exclude<GenerationVia, 'seed'>;

export interface SiteChange {
  /** The text as it will run (placeholders already put back). */
  text: string | Buffer;
  via: ChangeVia;
  /** Refused unless the running text's digest is this one when the change's turn comes. */
  baseDigest?: string;
  /** Above 0: the generation awaits a confirm this long, then goes back by itself. */
  confirmWithinS?: number;
  /** A rollback's source generation. */
  from?: number;
  /** How problems name the text (`site`, the file the page showed, the seed file). */
  label: string;
}

export type ChangeResult =
  /** `plan` and `watch`: of a change from the cloud (the box's are planned by the reload alone). */
  | { outcome: 'applied' | 'awaiting_confirm'; generation: number; digest: string; plan?: ReloadPlan; watch: PartsToWatch; reload: ReloadResult }
  | { outcome: 'unchanged'; generation: number; reload: ReloadResult }
  | { outcome: 'refused'; problems: ConfigIssue[]; reload?: ReloadResult };

export type CheckResult = { ok: true; plan: ReloadPlan; watch: PartsToWatch } | { ok: false; problems: ConfigIssue[] };

const refused = (message: string): ChangeResult => ({ outcome: 'refused', problems: [{ path: 'site', message }] });

/** Reader problems name the file read; the caller's label is what its user knows. */
function named(issues: readonly ConfigIssue[], file: string, label: string): ConfigIssue[] {
  return issues.map((i) => ({ path: i.path.replaceAll(file, label), message: i.message.replaceAll(file, label) }));
}

export class SiteChanges {
  readonly keeper: GenerationKeeper;
  readonly window: ConfirmationWindow;
  private lastRollback = '';
  /** Changes running or waiting their turn. */
  private pending = 0;
  private turn: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: SiteChangeDeps) {
    this.keeper = new GenerationKeeper(deps.store, deps.book, deps.startReason, deps.historyKept, deps.log);
    this.window = new ConfirmationWindow({
      time: deps.time, busUp: deps.busUp, linkUp: deps.linkUp,
      expired: (window, reason) => void this.exclusive(() => this.goBack(window, reason)),
    });
  }

  status(): SiteStatus {
    const { running } = this.keeper.book;
    return { generation: running, state: this.window.current() ? 'awaiting_confirm' : 'confirmed', file: this.deps.store.textPath(running), reason: this.keeper.reason, lastRollback: this.lastRollback };
  }

  /** A change runs or waits: the cloud's next one is refused, not queued. */
  busy(): boolean {
    return this.pending > 0;
  }

  /** Stops the confirmation timer (the window's generation is rolled back at the next start). */
  stop(): void {
    this.window.close();
  }

  /** A text read and planned as a reload would, nothing changed; `wayBack`: refuse what would cut the cloud's way back. */
  async check(text: string, label: string, wayBack: boolean): Promise<CheckResult> {
    const { store } = this.deps;
    const file = store.scratchPath();
    let reading: SiteReading;
    try {
      store.writeScratch(file, text);
      reading = await this.deps.readFile(file);
    } catch (err) {
      return { ok: false, problems: [{ path: label, message: `could not be checked: ${err instanceof Error ? err.message : String(err)}` }] };
    } finally {
      store.removeScratch(file);
    }
    if (!reading.config) return { ok: false, problems: named(reading.issues, file, label) };
    const plan = planSiteChange(this.deps.current(), reading.config, this.deps.addressHolders(), wayBack);
    if (!plan.ok) return { ok: false, problems: named(plan.issues, file, label) };
    return { ok: true, plan: plan.plan, watch: plan.watch };
  }

  /**
   * A text applied as a new generation. The cloud's is refused while another change runs or a
   * generation awaits confirmation; the box's waits its turn and ends an open window (the one on
   * the box decides).
   */
  async apply(change: SiteChange): Promise<ChangeResult> {
    const fromCloud = change.via === 'remote';
    if (fromCloud && this.busy()) return refused('another site change is in progress: nothing applied; get the site again once it ends');
    const open = this.window.current();
    if (fromCloud && open) return refused(`generation ${open.generation} awaits confirmation until ${this.window.confirmByIso()}: confirm it or roll it back first; nothing applied`);
    return this.exclusive(() => this.applyNow(change));
  }

  /** `fieldgate reload` (SIGHUP): the seed file read again and applied as a generation; every outcome is the reload's (recorded for the command). */
  async reloadSeed(): Promise<ReloadResult> {
    const seed = this.deps.readSeed();
    if (!('bytes' in seed)) return this.deps.reload(() => ({ issues: seed.issues }));
    const result = await this.apply({ text: seed.bytes, via: 'reload', label: seed.path });
    return result.reload ?? this.deps.reload(() => ({ issues: result.outcome === 'refused' ? result.problems : [] }));
  }

  confirm(): { ok: true; generation: number } | { ok: false; message: string; generation: number } {
    const open = this.window.current();
    if (!open || this.busy()) {
      const last = [...this.keeper.book.records].reverse().find((r) => r.via === 'remote' || r.via === 'rollback');
      const why = this.busy() ? 'a site change is in progress'
        : last?.outcome === 'rolled_back' ? `generation ${last.generation} was rolled back (${last.reason ?? 'no reason recorded'})`
          : `generation ${this.keeper.book.running} runs confirmed`;
      return { ok: false, message: `nothing awaits confirmation: ${why}`, generation: this.keeper.book.running };
    }
    const down = this.window.notUp();
    if (down.length > 0) return { ok: false, message: `not up yet: ${down.join(', ')}; confirm again once they are, or roll back (the window ends ${this.window.confirmByIso()})`, generation: open.generation };
    this.window.close();
    this.keeper.commit(confirmGeneration(this.keeper.book, open.generation), `generation ${open.generation}, applied by site_apply and confirmed`);
    this.deps.log.info({ generation: open.generation }, 'site generation confirmed');
    this.deps.changed();
    return { ok: true, generation: open.generation };
  }

  /** site_rollback: the awaiting generation's predecessor (rolled back), or an older one applied again as a new generation. */
  async rollback(generation: number): Promise<ChangeResult | { outcome: 'rolled_back'; generation: number } | { outcome: 'failed'; message: string }> {
    if (this.busy()) return refused('another site change is in progress: nothing applied');
    const target = recordOf(this.keeper.book, generation);
    const open = this.window.current();
    if (!target) return refused(`generation ${generation} is not in the history (kept: ${this.keeper.book.records.map((r) => r.generation).join(', ')})`);
    if (target.generation === this.keeper.book.running && !open) return refused(`generation ${target.generation} is the one running`);
    if (open && (target.generation === open.back || previousConfirmed(this.keeper.book, open.generation)?.generation === target.generation)) {
      const done = await this.exclusive(() => this.goBack(open, 'site_rollback'));
      return done ? { outcome: 'rolled_back', generation: this.keeper.book.running } : { outcome: 'failed', message: 'the rollback failed (see the log): the generation stays until a restart' };
    }
    const text = this.deps.store.readText(target.generation);
    if (text === undefined) return refused(`the text of generation ${target.generation} is no longer kept`);
    return this.apply({ text, via: 'rollback', from: target.generation, label: 'site' });
  }

  /** One change at a time, in the order asked. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    this.pending += 1;
    const run = this.turn.then(work).finally(() => { this.pending -= 1; });
    this.turn = run.catch(() => undefined);
    return run;
  }

  private staleIssue(change: SiteChange & { baseDigest: string }): ConfigIssue | undefined {
    const running = runningRecord(this.keeper.book);
    if (running.digest === change.baseDigest) return undefined;
    if (change.via === 'page') return { path: change.label, message: `the running site changed since this page showed it (generation ${running.generation}, ${running.via}): open the site file again; nothing applied` };
    return { path: 'site', message: `baseDigest is not the running site's (generation ${running.generation}, ${running.digest}): someone changed it meanwhile; get the site again; nothing applied` };
  }

  private async applyNow(change: SiteChange): Promise<ChangeResult> {
    const { store, log } = this.deps;
    const generation = this.keeper.nextGeneration();
    const path = store.textPath(generation);
    const digest = sha256Of(change.text);
    // The cloud's change is planned here too (the way back guarded, what must come up to confirm); the box's by the reload alone.
    const fromCloud = change.via === 'remote' || change.via === 'rollback';
    let planned: { plan?: ReloadPlan; watch: PartsToWatch } | undefined;
    // Everything in the reload's turn: a change that went first moved the base, and is seen here.
    const result = await this.deps.reload(async () => {
      const stale = change.baseDigest === undefined ? undefined : this.staleIssue({ ...change, baseDigest: change.baseDigest });
      if (stale) return { issues: [stale] };
      store.writeText(generation, change.text);
      const reading = await this.deps.readFile(path);
      if (!reading.config) return { issues: named(reading.issues, path, change.label) };
      if (!fromCloud) {
        planned = { watch: { buses: [], links: [] } };
        return { config: reading.config, sha256: digest, issues: [] };
      }
      const plan = planSiteChange(this.deps.current(), reading.config, this.deps.addressHolders(), true);
      if (!plan.ok) return { issues: named(plan.issues, path, change.label) };
      planned = { plan: plan.plan, watch: plan.watch };
      return { config: reading.config, sha256: digest, issues: [] };
    });
    if (result.outcome !== 'applied' || !planned) {
      store.removeText(generation);
      if (result.outcome === 'unchanged') {
        // The seed's text was taken: a restart need not take it again.
        if (change.via === 'reload') this.keeper.commit({ ...this.keeper.book, seedDigest: digest }, this.keeper.reason);
        return { outcome: 'unchanged', generation: this.keeper.book.running, reload: result };
      }
      return { outcome: 'refused', problems: named(result.problems, path, change.label), reload: result };
    }
    const back = this.keeper.book.running;
    const open = this.window.current();
    let book = this.keeper.book;
    if (open) {
      this.window.close();
      book = rollBackGeneration(book, open.generation, back, `replaced by generation ${generation} (${change.via}) before it was confirmed`);
    }
    const now = this.deps.time.wallNow();
    const windowS = change.confirmWithinS ?? 0;
    const confirmBy = windowS > 0 ? (now + windowS * 1000) as typeof now : undefined;
    book = addGeneration(book, { digest, at: now, via: change.via, ...(confirmBy === undefined ? {} : { confirmBy }), ...(change.from === undefined ? {} : { from: change.from }) }).book;
    if (change.via === 'reload') book = { ...book, seedDigest: digest };
    this.keeper.commit(book, `generation ${generation}, ${describeVia(change)}`);
    if (windowS > 0) this.window.start({ generation, back: open ? open.back : back, watch: planned.watch, windowS });
    log.info({ generation, back, via: change.via, confirmWithinS: windowS, ...(change.from === undefined ? {} : { from: change.from }), watch: planned.watch },
      windowS > 0 ? 'site generation applied, awaiting confirmation' : 'site generation applied');
    if (change.via === 'rollback') this.lastRollback = `site_rollback to generation ${change.from} as generation ${generation} at ${new Date(now).toISOString()}`;
    this.deps.changed();
    return { outcome: windowS > 0 ? 'awaiting_confirm' : 'applied', generation, digest, ...(planned.plan ? { plan: planned.plan } : {}), watch: planned.watch, reload: result };
  }

  /** The awaiting generation rolled back to the one before it (same number, same text, confirmed before). */
  private async goBack(window: OpenWindow, reason: string): Promise<boolean> {
    if (this.window.current()?.generation !== window.generation) return false;
    this.window.close();
    const { store, log } = this.deps;
    const record = recordOf(this.keeper.book, window.back);
    const text = store.readText(window.back);
    const reading = text === undefined ? undefined : await this.deps.readFile(store.textPath(window.back));
    const config = reading?.config;
    const result = config ? await this.deps.reload(() => ({ config, sha256: record?.digest ?? sha256Of(text ?? ''), issues: [] })) : undefined;
    if (result?.outcome !== 'applied') {
      const why = result ? result.problems.map((p) => p.message).join('; ') : `the text of generation ${window.back} cannot be read`;
      log.error({ generation: window.generation, back: window.back, reason, why }, 'site rollback failed: the generation stays; a restart rolls it back');
      return false;
    }
    this.keeper.commit(rollBackGeneration(this.keeper.book, window.generation, window.back, reason), `generation ${window.back}: generation ${window.generation} was rolled back (${reason})`);
    this.lastRollback = `generation ${window.generation} rolled back to ${window.back} at ${new Date(this.deps.time.wallNow()).toISOString()}: ${reason}`;
    log.warn({ generation: window.generation, back: window.back, reason }, 'site generation rolled back');
    this.deps.changed();
    return true;
  }
}

function describeVia(change: SiteChange): string {
  switch (change.via) {
    case 'remote': return 'applied by site_apply';
    case 'page': return 'applied from the commissioning page';
    case 'reload': return 'the seed file, reloaded on the box';
    case 'rollback': return `generation ${change.from} again, by site_rollback`;
  }
}
