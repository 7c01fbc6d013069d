// `npm run bench [-- FILTER]`: runs every benchmark module in turn and prints Markdown tables.
// A module exports `run(log)`; register it in BENCHES. Benchmarks measure; they never assert.
import { run as appSide } from './app-side.js';
import { run as inbound } from './inbound.js';
import { run as gateway } from './gateway.js';
import { run as flood } from './flood.js';
import { run as hostile } from './hostile.js';
import { run as idle } from './idle.js';
import { run as northbound } from './northbound.js';
import { run as outboxDisk } from './outbox-disk.js';
import { run as outboxMemory } from './outbox-memory.js';
import { run as reloadStall } from './reload-stall.js';
import { run as southbound } from './southbound.js';
import { run as share } from './share.js';
import { run as webPage } from './web-page.js';

const BENCHES: Record<string, (log: (line: string) => void) => Promise<void>> = {
  southbound: (log) => southbound(log),
  northbound: (log) => northbound(log),
  'outbox-disk': (log) => outboxDisk(log),
  'outbox-memory': (log) => outboxMemory(log),
  inbound: (log) => inbound(log),
  hostile: (log) => hostile(log),
  flood: (log) => flood(log),
  gateway: (log) => gateway(log),
  idle: (log) => idle(log),
  'reload-stall': (log) => reloadStall(log),
  share: (log) => share(log),
  'web-page': (log) => webPage(log),
  'app-side': (log) => appSide(log),
};

const filter = process.argv[2];
const log = (line: string) => process.stdout.write(`${line}\n`);
for (const [name, bench] of Object.entries(BENCHES)) {
  if (filter && !name.includes(filter)) continue;
  await bench(log);
}
