// The running shares' lifecycle (docs/share.md): one Modbus TCP server per bus with a `share:`
// block, built beside the southbound and changed by a reload on its own: a share whose block and
// bus are unchanged keeps its clients (its unit map follows the bus's devices), a changed block
// restarts only that share, a restarted bus restarts its share with it. Its cache follows the bus
// (share-cache.ts); a forwarded write is read back (share-read-back.ts).
import type { ShareConfig } from '../core/config/share.js';
import { shareExposureWarning } from '../core/config/share.js';
import type { SiteConfig } from '../core/config/site-types.js';
import { sharePolicy } from '../core/modbus/share-policy.js';
import type { Clock } from '../core/time.js';
import { busReadCache } from './share-cache.js';
import { readBackWritten, type ReadBackWiring } from './share-read-back.js';
import { ShareService } from './share-service.js';
import type { Bus } from '../field/modbus/bus.js';
import { ShareServer } from './share-server.js';
import type { Logger } from '../core/logger.js';
import type { ShareStatus } from './share-status.js';

export interface ShareWiring extends ReadBackWiring {
  buses: ReadonlyMap<string, Bus>;
  clock: Clock;
  log: Logger;
}

interface RunningShare {
  config: ShareConfig;
  bus: Bus;
  server: ShareServer;
  service: ShareService;
  stopCache: () => void;
  state: 'starting' | 'listening' | 'failed';
  error?: string;
}

export class Shares {
  private readonly running = new Map<string, RunningShare>();
  private site: SiteConfig;
  /** Starts, reloads and the stop run one after the other (a reload may come while one applies). */
  private turn: Promise<void> = Promise.resolve();

  constructor(site: SiteConfig, private readonly wiring: ShareWiring) {
    this.site = site;
  }

  /** Starts every configured share; one that cannot listen is logged and shown failed, the rest run. */
  start(): Promise<void> {
    return this.apply(this.site);
  }

  /** After a reload (the southbound already changed): starts, restarts, keeps or stops each share. */
  apply(next: SiteConfig): Promise<void> {
    return this.inTurn(() => this.applyNow(next));
  }

  stop(): Promise<void> {
    return this.inTurn(async () => {
      for (const [name, share] of [...this.running]) await this.stopOne(name, share, 'stopping');
    });
  }

  private inTurn(work: () => Promise<void>): Promise<void> {
    const next = this.turn.then(work, work);
    this.turn = next.catch(() => undefined);
    return next;
  }

  private async applyNow(next: SiteConfig): Promise<void> {
    this.site = next;
    const wanted = new Map(next.buses.flatMap((b) => (b.share ? [[b.name, b.share] as const] : [])));
    for (const [name, share] of [...this.running]) {
      const config = wanted.get(name);
      const bus = this.wiring.buses.get(name);
      // A share that could not listen tries again at every reload.
      if (config && bus === share.bus && share.state !== 'failed' && JSON.stringify(config) === JSON.stringify(share.config)) {
        share.service.setPolicy(sharePolicy(config, this.unitsOf(name)));
        continue;
      }
      await this.stopOne(name, share, !config ? 'share removed' : share.state === 'failed' ? 'retrying to listen' : 'share or bus changed');
    }
    for (const [name, config] of wanted) if (!this.running.has(name)) await this.startOne(name, config);
  }

  status(): ShareStatus[] {
    return [...this.running].map(([bus, share]) => ({
      bus, listen: `${share.config.address}:${share.server.port}`, state: share.state, access: share.config.access,
      clients: share.server.clients, refusedConnections: share.server.refusedConnections, ...share.service.counters, queued: share.service.queued,
      queueWaitMs: share.service.queueWait(), ...(share.error ? { error: share.error } : {}),
    }));
  }

  /** The running share of `bus` (tests look at what it keeps per client). */
  service(bus: string): ShareService | undefined {
    return this.running.get(bus)?.service;
  }

  private unitsOf(bus: string): number[] {
    return [...new Set(this.site.devices.filter((d) => d.bus === bus).map((d) => d.unitId))];
  }

  private async startOne(name: string, config: ShareConfig): Promise<void> {
    const bus = this.wiring.buses.get(name);
    if (!bus) return;
    const log = this.wiring.log.child({ bus: name, share: `${config.address}:${config.port}` });
    bus.setLineShare(config.lineShare);
    const { cache, stop: stopCache } = busReadCache(bus, config);
    const service = new ShareService({
      bus, config, policy: sharePolicy(config, this.unitsOf(name)), ...(cache ? { cache } : {}), clock: this.wiring.clock, log,
      // A broadcast (bus unit 0) wrote to every unit of the bus.
      written: (unit, table, first, last) => {
        for (const u of unit === 0 ? this.unitsOf(name) : [unit]) readBackWritten(this.wiring, this.site.devices, name, u, table, first, last, log);
      },
    });
    const server = new ShareServer({ address: config.address, port: config.port, maxClients: config.maxClients, idleTimeoutMs: config.idleTimeoutMs, handler: service, log });
    const share: RunningShare = { config, bus, server, service, stopCache, state: 'starting' };
    this.running.set(name, share);
    const warning = shareExposureWarning(config);
    if (warning) log.warn({ warning }, 'share reachable beyond this host forwards writes');
    try {
      await server.listen();
      share.state = 'listening';
      log.info({ port: server.port, access: config.access, units: [...sharePolicy(config, this.unitsOf(name)).units.keys()] }, 'share listening');
    } catch (err) {
      share.state = 'failed';
      share.error = err instanceof Error ? err.message : String(err);
      log.error({ err }, 'share could not listen; the bus runs without it');
    }
  }

  private async stopOne(name: string, share: RunningShare, reason: string): Promise<void> {
    this.running.delete(name);
    share.stopCache();
    await share.server.close();
    this.wiring.log.info({ bus: name, reason }, 'share stopped');
  }
}
