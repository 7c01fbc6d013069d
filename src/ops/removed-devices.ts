// Reports queued for a device that left the site never wait for it to come back (they were
// delivered only when it was added again, and every stop waited drainMs for them): a device a
// reload removes keeps its link (or, in gateway mode, its place on the identity's link) while it is
// up, for up to drainMs, to send them under its own identity; what is left then is dropped and
// counted per device (`/status` `outbox.dropped`, `droppedByDevice`, metrics). At start, reports
// of devices no longer in the site (no identity to send them under) are dropped and counted too,
// and so are those of an outbox file taken up later (a start that could not open it).
import type { SiteConfig } from '../core/config/site-types.js';
import type { Logger } from '../core/logger.js';
import { sleep, type Time } from '../core/time.js';
import type { ReportOutbox } from '../core/outbox-types.js';
import type { CloudSide } from './cloud-side.js';
import type { GatewayOutbox } from './gateway-outbox.js';

export interface RetiringParts {
  outbox: Pick<ReportOutbox, 'devicesWithBacklog'>;
  /** Drops every report queued for a device, counted as dropped; returns how many. */
  discard(device: string): number;
  /** Whether the link that sends this device's reports is up (its own, or the identity's). */
  linkUp(device: string): boolean;
  /** How long the link may keep sending (drainMs). */
  sendMs: number;
  time: Time;
  log: Logger;
}

/**
 * A leaving device: `remove` stops its parts. A replaced device keeps its queue for its successor
 * (same name). A removed one first sends what its link can within `sendMs`, then the rest is dropped.
 */
export async function retireDevice(device: string, replaced: boolean, parts: RetiringParts, remove: () => Promise<void>): Promise<void> {
  if (replaced) return remove();
  const queued = () => parts.outbox.devicesWithBacklog().includes(device);
  const hadBacklog = queued();
  const until = parts.time.now() + parts.sendMs;
  while (queued() && parts.linkUp(device) && parts.time.now() < until) await sleep(parts.time, 50);
  const linkUp = parts.linkUp(device);
  await remove();
  const dropped = parts.discard(device);
  if (dropped > 0) parts.log.warn({ device, dropped, sendMs: parts.sendMs, linkUp }, 'removed device: queued reports dropped');
  else if (hadBacklog) parts.log.info({ device }, 'removed device: queued reports sent');
}

/** At start: the queues of devices the site no longer has (or no longer sends to the cloud) dropped, one line. */
export function dropOrphanQueues(site: SiteConfig, parts: Pick<RetiringParts, 'outbox' | 'discard' | 'log'>): void {
  const known = new Set(site.devices.filter((d) => d.cloud).map((d) => d.name));
  const byDevice: Record<string, number> = {};
  let total = 0;
  for (const device of parts.outbox.devicesWithBacklog()) {
    if (known.has(device)) continue;
    const dropped = parts.discard(device);
    if (dropped === 0) continue;
    byDevice[device] = dropped;
    total += dropped;
  }
  if (total > 0) parts.log.warn({ total, byDevice }, 'queued reports of devices no longer in the site dropped');
}

/**
 * A start without its outbox file (state directory read-only, full, missing) saw none of its rows:
 * when the file is taken up, its queues of devices the site no longer has go by the same rule, for
 * the site running then (`runningSite` waits for a reload being applied: a device it removes is
 * still retiring, one it adds keeps its queue).
 */
export function dropOrphanQueuesOnTakeUp(store: Pick<GatewayOutbox, 'onFileTakenUp'>, runningSite: () => Promise<SiteConfig>, parts: Pick<RetiringParts, 'outbox' | 'discard' | 'log'>): void {
  store.onFileTakenUp(() => {
    runningSite().then((site) => dropOrphanQueues(site, parts))
      .catch((err: unknown) => parts.log.error({ err }, 'queues of devices no longer in the site not dropped after the outbox file was taken up'));
  });
}

/** The link that sends a device's reports is up: fieldgate's identity link for a sub-device, else the device's own. */
export function deviceLinkUp(cloudSide: Pick<CloudSide, 'sessions' | 'gateway' | 'subDevices'>, device: string): boolean {
  if (cloudSide.subDevices.has(device)) return cloudSide.gateway?.linkState() === 'up';
  return cloudSide.sessions.get(device)?.linkState() === 'up';
}
