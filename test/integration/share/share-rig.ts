// A bus share in front of a simulated RTU line (socat pty pair), with a poll loop standing in for
// fieldgate's poller: the real Bus, the real share server and service (share/shares.ts).
import { validateSite } from '../../../src/core/config/site.js';
import type { SiteConfig } from '../../../src/core/config/site-types.js';
import { systemClock } from '../../../src/core/time.js';
import { Bus } from '../../../src/field/modbus/bus.js';
import { createModbusTransport } from '../../../src/field/modbus/transport.js';
import { Shares } from '../../../src/share/shares.js';
import { captureLogger, type CapturedLog } from '../../helpers/capture-logger.js';
import { freePort } from '../../helpers/mosquitto.js';
import { startPtyPair, type PtyPair } from '../../helpers/socat.js';
import { waitFor } from '../../helpers/wait.js';

export interface ShareRig {
  port: number;
  bus: Bus;
  shares: Shares;
  site: SiteConfig;
  log: CapturedLog;
  polls: { ok: number; failed: number };
  stopPolling(): void;
  stop(): Promise<void>;
}

export interface RigOptions {
  share: Record<string, unknown>;
  bus?: Record<string, unknown>;
  /** Units with a device (unit 1 and 2 by default), each polling holding 0..9. */
  units?: number[];
  /** The poll loop's pause between rounds (ms); 0: no polling. */
  pollEveryMs?: number;
  /** The share's port (default: a free one). */
  sharePort?: number;
}

/** `serve`: starts the simulator on the far end of the pty pair (or, for a tcp bus, anywhere); returns its stop. */
export async function startShareRig(options: RigOptions, serve: (path: string) => Promise<() => Promise<void>>): Promise<ShareRig> {
  const pair: PtyPair = await startPtyPair();
  const stopSimulator = await serve(pair.b);
  const port = options.sharePort ?? await freePort();
  const units = options.units ?? [1, 2];
  // A tcp or rtu-over-tcp bus (options.bus names its host and port) leaves the pty pair unused.
  const line = options.bus?.kind === 'tcp' || options.bus?.kind === 'rtu-over-tcp' ? { name: 'line', timeoutMs: 300 } : { name: 'line', kind: 'rtu', path: pair.a, baudRate: 19200, timeoutMs: 300, lateReplyGuardMs: 400 };
  const result = validateSite({
    buses: [{ ...line, ...options.bus, share: { port, ...options.share } }],
    devices: units.map((unit) => ({ name: `meter${unit}`, bus: 'line', unitId: unit, points: [{ id: 'v', table: 'holding', address: 0, type: 'uint16', writable: true }] })),
  });
  if (!result.site) throw new Error(JSON.stringify(result.issues));
  const site = result.site;
  const log = captureLogger();
  const bus = new Bus({ config: site.buses[0]!, transportFactory: createModbusTransport, logger: log.logger });
  bus.start();
  await waitFor(() => bus.stats().state === 'up', { what: 'bus up' });
  const shares = new Shares(site, {
    buses: new Map([['line', bus]]), clock: systemClock, log: log.logger,
    readBack: () => undefined, confirmed: () => undefined,
  });
  await shares.start();
  const polls = { ok: 0, failed: 0 };
  let polling = (options.pollEveryMs ?? 0) > 0;
  const loop = (async () => {
    while (polling) {
      for (const unit of units) {
        await bus.read(unit, 'holding', 0, 10).then(() => { polls.ok += 1; }, () => { polls.failed += 1; });
      }
      await new Promise((resolve) => setTimeout(resolve, options.pollEveryMs));
    }
  })();
  return {
    port, bus, shares, site, log, polls,
    stopPolling: () => { polling = false; },
    async stop() {
      polling = false;
      await loop;
      await shares.stop();
      await bus.stop();
      await stopSimulator();
      await pair.stop();
    },
  };
}
