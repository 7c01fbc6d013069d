// Which site file the daemon runs: generation (1 at start, +1 per applied reload), the file's
// sha256, when it was loaded, the last refusal, and reload counters. Kept for /status, /metrics and
// the own device, and written to `<stateDir>/config-state.json` after every reload attempt, which
// is how `fieldgate reload` finds the daemon's PID and reads its answer (with or without the
// health endpoint).
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ConfigIssue } from '../core/config/site-types.js';
import { formatIssue } from '../core/config/issues.js';
import type { ConfigStatus } from './status.js';
import type { EpochMs } from '../core/time.js';

export const CONFIG_STATE_FILE = 'config-state.json';

/** `failed`: accepted, but applying it failed part-way and was rolled back (the running config is unchanged). */
export type ReloadOutcome = 'applied' | 'unchanged' | 'refused' | 'failed';

/** What the daemon writes after each reload attempt; `attempt` 0 at start. */
export interface ConfigStateFile extends ConfigStatus {
  pid: number;
  attempt: number;
  outcome: ReloadOutcome | 'started';
  /** The refusal's (or failure's) problems, each with its path (empty unless refused or failed). */
  problems: ConfigIssue[];
}

/** The refusal text: every problem with its path, on one line. */
export function refusalText(issues: readonly ConfigIssue[]): string {
  return `${issues.length} problem(s): ${issues.map(formatIssue).join('; ')}`;
}

export class ConfigState {
  private generation = 1;
  private sha256: string;
  /** Wall clock: shown, and read by `fieldgate reload` from the file. */
  private loadedAt: EpochMs;
  private lastError: string | null = null;
  private attempt = 0;
  private readonly reloads = { applied: 0, unchanged: 0, refused: 0, failed: 0 };
  private readonly path: string;

  constructor(stateDir: string, sha256: string, now: EpochMs, private readonly pid: number, private readonly onWriteError: (err: unknown) => void) {
    this.sha256 = sha256;
    this.loadedAt = now;
    this.path = join(stateDir, CONFIG_STATE_FILE);
    this.write('started', []);
  }

  status(): ConfigStatus {
    return { generation: this.generation, sha256: this.sha256, loadedAt: new Date(this.loadedAt).toISOString(), lastError: this.lastError, reloads: { ...this.reloads } };
  }

  /** One reload attempt's result; `sha256` of the file read (refusals and failures keep the running one's). */
  record(outcome: ReloadOutcome, now: EpochMs, sha256: string | undefined, problems: readonly ConfigIssue[] = []): void {
    this.attempt += 1;
    this.reloads[outcome] += 1;
    if (outcome === 'refused' || outcome === 'failed') {
      this.lastError = refusalText(problems);
    } else {
      this.lastError = null;
      if (outcome === 'applied') {
        this.generation += 1;
        this.loadedAt = now;
      }
      if (sha256 !== undefined) this.sha256 = sha256;
    }
    this.write(outcome, problems);
  }

  /** On stop: a stale file must not point `fieldgate reload` at a PID reused by another process. */
  remove(): void {
    try {
      const current = JSON.parse(readFileSync(this.path, 'utf8')) as { pid?: unknown };
      if (current.pid === this.pid) rmSync(this.path, { force: true });
    } catch {
      // Already gone or unreadable: nothing of ours to remove.
    }
  }

  private write(outcome: ConfigStateFile['outcome'], problems: readonly ConfigIssue[]): void {
    const body: ConfigStateFile = { ...this.status(), pid: this.pid, attempt: this.attempt, outcome, problems: [...problems] };
    const temporary = `${this.path}.tmp`;
    try {
      writeFileSync(temporary, `${JSON.stringify(body)}\n`, { mode: 0o600 });
      renameSync(temporary, this.path);
    } catch (err) {
      this.onWriteError(err);
    }
  }
}
