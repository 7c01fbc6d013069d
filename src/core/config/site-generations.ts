// The site generations of a box (pure): which site text runs, how each came (the seed file, the
// cloud, the page, a reload, a rollback) and how each ended (confirmed, rolled back and why). The
// book lives in the state directory (ops/site-store.ts); every change here returns a new book.
import type { EpochMs } from '../time.js';

export type GenerationVia = 'seed' | 'remote' | 'page' | 'reload' | 'rollback';
export type GenerationOutcome = 'awaiting_confirm' | 'confirmed' | 'rolled_back';

export interface GenerationRecord {
  readonly generation: number;
  /** sha256 of the site text's bytes. */
  readonly digest: string;
  /** When it was applied (wall clock: written to disk, shown). */
  readonly at: EpochMs;
  readonly via: GenerationVia;
  readonly outcome: GenerationOutcome;
  /** Why it was rolled back. */
  readonly reason?: string;
  /** A rollback's source generation. */
  readonly from?: number;
  /** A generation awaiting confirmation is rolled back at this wall time if it is still waiting at a start. */
  readonly confirmBy?: EpochMs;
}

export interface GenerationBook {
  /** Oldest first. */
  readonly records: readonly GenerationRecord[];
  /** The generation running (or about to run). */
  readonly running: number;
  /** sha256 of the seed file when it was last taken in (a start, `fieldgate reload`): a different seed is the operator's new site. */
  readonly seedDigest: string;
}

export interface StartChoice {
  book: GenerationBook;
  /** The generation to run now. */
  run: GenerationRecord;
  /** Said by status, the page and site_get: why this text runs. */
  reason: string;
  /** A generation found awaiting confirmation (a crash or stop in its window): rolled back now. */
  rolledBack?: number;
}

export function recordOf(book: GenerationBook, generation: number): GenerationRecord | undefined {
  return book.records.find((r) => r.generation === generation);
}

export function runningRecord(book: GenerationBook): GenerationRecord {
  const record = recordOf(book, book.running);
  if (!record) throw new Error(`generation book has no record of its running generation ${book.running}`);
  return record;
}

function nextNumber(book: GenerationBook | undefined): number {
  return book ? Math.max(0, ...book.records.map((r) => r.generation)) + 1 : 1;
}

function replaced(book: GenerationBook, record: GenerationRecord): GenerationBook {
  return { ...book, records: book.records.map((r) => (r.generation === record.generation ? record : r)) };
}

/** The latest confirmed generation before `before` (what a rollback goes back to). */
export function previousConfirmed(book: GenerationBook, before: number): GenerationRecord | undefined {
  return [...book.records].reverse().find((r) => r.generation < before && r.outcome === 'confirmed');
}

function iso(at: EpochMs): string {
  return new Date(at).toISOString();
}

/** Which generation a start runs: the seed when it is new or changed since it was last taken in, else the last confirmed one. */
export function chooseAtStart(stored: GenerationBook | undefined, seedDigest: string, now: EpochMs): StartChoice {
  if (!stored || stored.records.length === 0) {
    const run: GenerationRecord = { generation: 1, digest: seedDigest, at: now, via: 'seed', outcome: 'confirmed' };
    return { book: { records: [run], running: 1, seedDigest }, run, reason: 'the seed file (no generation applied since)' };
  }
  let book = stored;
  let rolledBack: number | undefined;
  const current = recordOf(book, book.running);
  if (current?.outcome === 'awaiting_confirm') {
    rolledBack = current.generation;
    book = replaced(book, { ...current, outcome: 'rolled_back', reason: 'fieldgate restarted while it awaited confirmation' });
  }
  if (stored.seedDigest !== seedDigest) {
    const run: GenerationRecord = { generation: nextNumber(book), digest: seedDigest, at: now, via: 'seed', outcome: 'confirmed' };
    return {
      book: { records: [...book.records, run], running: run.generation, seedDigest }, run, ...(rolledBack === undefined ? {} : { rolledBack }),
      reason: `the seed file changed since it was last taken in: it runs as generation ${run.generation}`,
    };
  }
  const run = rolledBack === undefined ? current : previousConfirmed(book, rolledBack);
  if (!run || run.outcome !== 'confirmed') {
    // Nothing confirmed to go back to: the seed, which is unchanged, runs again.
    const seed: GenerationRecord = { generation: nextNumber(book), digest: seedDigest, at: now, via: 'seed', outcome: 'confirmed' };
    return { book: { records: [...book.records, seed], running: seed.generation, seedDigest }, run: seed, reason: 'the seed file (no confirmed generation to run)', ...(rolledBack === undefined ? {} : { rolledBack }) };
  }
  const why = rolledBack === undefined
    ? `generation ${run.generation}, the last confirmed (${run.via}, ${iso(run.at)})`
    : `generation ${run.generation}, the last confirmed: generation ${rolledBack} awaited confirmation when fieldgate stopped and was rolled back`;
  return { book: { ...book, running: run.generation }, run, reason: why, ...(rolledBack === undefined ? {} : { rolledBack }) };
}

/** A new generation applied: confirmed at once, or awaiting confirmation until `confirmBy`. */
export function addGeneration(book: GenerationBook, entry: { digest: string; at: EpochMs; via: GenerationVia; confirmBy?: EpochMs; from?: number }): { book: GenerationBook; record: GenerationRecord } {
  const record: GenerationRecord = {
    generation: nextNumber(book), digest: entry.digest, at: entry.at, via: entry.via,
    outcome: entry.confirmBy === undefined ? 'confirmed' : 'awaiting_confirm',
    ...(entry.confirmBy === undefined ? {} : { confirmBy: entry.confirmBy }), ...(entry.from === undefined ? {} : { from: entry.from }),
  };
  return { book: { ...book, records: [...book.records, record], running: record.generation }, record };
}

export function confirmGeneration(book: GenerationBook, generation: number): GenerationBook {
  const record = recordOf(book, generation);
  if (!record || record.outcome !== 'awaiting_confirm') return book;
  const { confirmBy: _done, ...rest } = record;
  return replaced(book, { ...rest, outcome: 'confirmed' });
}

/** `generation` rolled back for `reason`; `back` runs again (no new number: it is the same text, confirmed before). */
export function rollBackGeneration(book: GenerationBook, generation: number, back: number, reason: string): GenerationBook {
  const record = recordOf(book, generation);
  if (!record) return book;
  const { confirmBy: _done, ...rest } = record;
  return { ...replaced(book, { ...rest, outcome: 'rolled_back', reason }), running: back };
}

/**
 * At most `keep` records, the newest; the running one and the one a rollback would go back to are
 * always kept. Returns the generations dropped (their texts can go).
 */
export function pruneBook(book: GenerationBook, keep: number): { book: GenerationBook; dropped: number[] } {
  if (book.records.length <= keep) return { book, dropped: [] };
  const back = previousConfirmed(book, book.running)?.generation;
  const newest = new Set(book.records.slice(-keep).map((r) => r.generation));
  const kept = book.records.filter((r) => newest.has(r.generation) || r.generation === book.running || r.generation === back);
  const dropped = book.records.filter((r) => !kept.includes(r)).map((r) => r.generation);
  return { book: { ...book, records: kept }, dropped };
}

/** site_history's answer: the last `count` generations, newest first, times as ISO text. */
export function historyView(book: GenerationBook, count: number): Array<Record<string, unknown>> {
  return book.records.slice(-count).reverse().map((r) => ({
    generation: r.generation, digest: r.digest, at: iso(r.at), via: r.via, outcome: r.outcome, running: r.generation === book.running,
    ...(r.reason === undefined ? {} : { reason: r.reason }), ...(r.from === undefined ? {} : { from: r.from }),
    ...(r.confirmBy === undefined ? {} : { confirmBy: iso(r.confirmBy) }),
  }));
}

/** A book read from disk, checked field by field: anything else is no book (the seed runs, and says so). */
export function parseBook(raw: unknown): GenerationBook | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const { records, running, seedDigest } = raw as Record<string, unknown>;
  if (!Array.isArray(records) || typeof running !== 'number' || typeof seedDigest !== 'string') return undefined;
  const vias: readonly string[] = ['seed', 'remote', 'page', 'reload', 'rollback'];
  const outcomes: readonly string[] = ['awaiting_confirm', 'confirmed', 'rolled_back'];
  const parsed: GenerationRecord[] = [];
  for (const r of records as unknown[]) {
    if (typeof r !== 'object' || r === null) return undefined;
    const x = r as Record<string, unknown>;
    if (!Number.isInteger(x.generation) || typeof x.digest !== 'string' || typeof x.at !== 'number' || !vias.includes(String(x.via)) || !outcomes.includes(String(x.outcome))) return undefined;
    parsed.push(x as unknown as GenerationRecord);
  }
  if (!parsed.some((r) => r.generation === running)) return undefined;
  return { records: parsed, running, seedDigest };
}
