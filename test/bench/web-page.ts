// The commissioning page's idle cost (`npm run bench -- web-page`): this checkout's daemon twice
// side by side, the page off and on with nobody looking, in the idle bench's set-up (idle.ts).
// With no page open nothing of the page runs but the samples into the history rings.
import { loadavg } from 'node:os';
import { currentCheckout } from './checkouts.js';
import { measureIdle } from './idle.js';

export async function run(log: (line: string) => void): Promise<void> {
  const options = { warmupS: 20, measureS: 60, scrapeEveryS: 15, cloud: false };
  const current = currentCheckout();
  const load = loadavg()[0];
  const rounds = [];
  // Two rounds, the order swapped in the second: the box's own noise shows in the spread.
  rounds.push(await measureIdle([{ ...current, label: 'page off' }, { ...current, label: 'page on, no client' }], { ...options, web: [false, true] }));
  rounds.push(await measureIdle([{ ...current, label: 'page on, no client' }, { ...current, label: 'page off' }], { ...options, web: [true, false] }));
  log('## Commissioning page, idle');
  log('');
  log(`The idle bench's daemon (one device of 10 registers every 1 s, health scraped every ${options.scrapeEveryS} s), page off and on with no client, side by side;`
    + ` ${options.warmupS} s warm-up, ${options.measureS} s measured, two rounds; load average (1 min) ${load.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after.`);
  log('');
  log('| round | daemon | wake-ups/s, main thread | CPU s per 1,000 registers | registers/s | RssAnon |');
  log('| --- | --- | --- | --- | --- | --- |');
  for (const [i, round] of rounds.entries()) {
    for (const f of round) log(`| ${i + 1} | ${f.label} | ${f.wakeupsPerS.toFixed(2)} | ${f.cpuSPer1000Registers.toFixed(3)} | ${f.registersPerS.toFixed(1)} | ${f.rssAnonMb.toFixed(1)} MB |`);
  }
  log('');
}
