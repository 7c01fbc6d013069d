// The generation book in memory and on disk for remote configuration: the running record and
// its text, the next number, and each change saved (pruned, old texts removed).
import { pruneBook, runningRecord, type GenerationBook } from '../core/config/site-generations.js';
import type { Logger } from '../core/logger.js';
import type { SiteStorePort } from './remote-site-types.js';

export class GenerationKeeper {
  constructor(private readonly store: SiteStorePort, public book: GenerationBook, public reason: string, private readonly historyKept: number, private readonly log: Logger) {}

  runningText(): { text: string; digest: string } {
    const record = runningRecord(this.book);
    const text = this.store.readText(record.generation);
    if (text === undefined) throw new Error(`the text of generation ${record.generation} is missing from ${this.store.textPath(record.generation)}`);
    return { text, digest: record.digest };
  }

  nextGeneration(): number {
    return Math.max(0, ...this.book.records.map((r) => r.generation)) + 1;
  }

  /** The book saved (pruned, old texts removed), with why its running generation runs; a write failure is logged, the running site is not undone. */
  commit(book: GenerationBook, reason: string): void {
    const pruned = pruneBook(book, this.historyKept);
    this.book = pruned.book;
    this.reason = reason;
    try {
      this.store.save(this.book);
      for (const generation of pruned.dropped) this.store.removeText(generation);
    } catch (err) {
      this.log.error({ err, generation: this.book.running }, 'site generations not written: a restart runs the last one written');
    }
  }
}
