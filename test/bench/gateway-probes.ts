// What the gateway bench watches of a daemon and the emulator: points stored (counted and dropped
// as they arrive), refusals in the daemon's log (any version's wording), memory from /proc, and the
// peak of a reload.
import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Emulator } from '../../packages/emulator/src/index.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Point values the emulator stored for these devices, counted as they arrive and then dropped from
 * its history: at 2,000 devices x 50 points a history kept whole would hold millions of entries.
 */
export class StoredPoints {
  private readonly perDevice: number[];

  constructor(private readonly emulator: Emulator, private readonly ids: readonly string[]) {
    this.perDevice = ids.map(() => 0);
  }

  take(): { points: number; perDevice: number[] } {
    this.ids.forEach((id, i) => {
      const history = this.emulator.state.devices.get(id)?.history;
      if (!history) return;
      let points = 0;
      for (const h of history) if (h.type === 'report' && /^p\d+$/.test(h.name)) points += 1;
      this.perDevice[i] += points;
      history.length = 0;
    });
    return { points: this.perDevice.reduce((a, b) => a + b, 0), perDevice: [...this.perDevice] };
  }
}

/** What the daemon logs of the cloud refusing its messages (any version's wording), first lines kept. */
export class RefusalWatch {
  readonly lines: string[] = [];
  count = 0;
  private partial = '';

  constructor(child: ChildProcess, echo: boolean) {
    const read = (chunk: Buffer) => {
      if (echo) process.stderr.write(chunk);
      const text = this.partial + chunk.toString('utf8');
      const lines = text.split('\n');
      this.partial = (lines.pop() ?? '').slice(-65_536);
      for (const line of lines) {
        if (!/cloud refuse|cloud refused|not bound to this gateway/.test(line)) continue;
        this.count += 1;
        if (this.lines.length < 5) this.lines.push(line.slice(0, 400));
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
  }

  /** Throws when the cloud refused anything: figures of such a run measure nothing. */
  check(what: string): void {
    if (this.count > 0) throw new Error(`${what}: the cloud refused reports (${this.count} log line(s)); the daemon logged:\n${this.lines.join('\n')}`);
  }
}

export function rssKb(pid: number): { rss: number; hwm: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: field('VmRSS'), hwm: field('VmHWM'), anon: field('RssAnon'), file: field('RssFile') };
}

/** Waits until every device has a report stored; returns those still without one after timeoutS. */
export async function untilEveryDeviceReports(stored: StoredPoints, ids: readonly string[], timeoutS: number, refusals: RefusalWatch): Promise<string[]> {
  const until = performance.now() + timeoutS * 1000;
  const silent = () => {
    const { perDevice } = stored.take();
    return ids.filter((_, i) => perDevice[i] === 0);
  };
  while (silent().length > 0 && performance.now() < until && refusals.count === 0) await sleep(500);
  return silent();
}

/** Resets the daemon's VmHWM, rewrites the site with one device changed, reloads, and reads the peak once the reload applied and settled. */
export async function reloadPeak(pid: number, dir: string, rewrite: () => void): Promise<{ peakMb: number; seconds: number }> {
  const statePath = join(dir, 'state', 'config-state.json');
  const attempt = () => (JSON.parse(readFileSync(statePath, 'utf8')) as { attempt: number; outcome: string });
  const before = attempt().attempt;
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
  rewrite();
  const started = performance.now();
  process.kill(pid, 'SIGHUP');
  const until = started + 300_000;
  let answer = attempt();
  while (answer.attempt === before && performance.now() < until) {
    await sleep(200);
    answer = attempt();
  }
  if (answer.attempt === before || answer.outcome !== 'applied') throw new Error(`gateway bench: the reload was not applied (${JSON.stringify(answer)})`);
  const seconds = (performance.now() - started) / 1000;
  await sleep(3000);
  return { peakMb: rssKb(pid).hwm / 1024, seconds };
}
