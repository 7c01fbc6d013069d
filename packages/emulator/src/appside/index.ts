// The app-side subscription service in one call: broker, its listeners, and the feed the cloud
// state writes into.
import type { Logger } from 'fieldgate/workspace-kit';
import { AppBroker, DEFAULT_APP_BROKER_LIMITS, type AppBrokerCounters, type AppBrokerLimits, type AppCredentials } from './broker.js';
import { AppFeed } from './feed.js';
import { AppListeners, type AppListenOptions, type AppPorts } from './listeners.js';

export { APP_WS_PATH } from './listeners.js';
export type { AppBrokerLimits } from './broker.js';

export interface AppSideOptions extends Omit<AppListenOptions, 'host'> {
  limits?: Partial<Omit<AppBrokerLimits, 'maxPacketBytes'>>;
  /** Messages handed to the broker and not yet fanned out; more are dropped and counted. */
  maxPendingMessages?: number;
}

export const DEFAULT_APP_MAX_PENDING = 1000;
export const DEFAULT_APP_MAX_FRAME_BYTES = 256 * 1024;

export interface AppSideStats extends AppBrokerCounters {
  messagesDroppedBacklog: number;
  messagesInFlight: number;
}

export interface AppSide {
  readonly ports: AppPorts;
  readonly feed: AppFeed;
  stats(): AppSideStats;
  close(): Promise<void>;
}

export function checkAppLimits(limits: AppBrokerLimits, maxPending: number, maxFrameBytes: number): string | undefined {
  for (const [name, value] of Object.entries({ maxFrameBytes, ...limits, maxPendingMessages: maxPending })) {
    if (!Number.isInteger(value) || value <= 0) return `app-side ${name} must be a positive integer (got ${String(value)})`;
  }
  return undefined;
}

export async function startAppSide(
  options: AppSideOptions, host: string, credentials: AppCredentials, logger: Logger, now: () => number,
): Promise<AppSide> {
  const log = logger.child({ component: 'app-side' });
  // One bound on what an app may send: a WebSocket message, and an MQTT packet on any door (a
  // packet may span several WebSocket messages, so the ws doors need both).
  const limits: AppBrokerLimits = { ...DEFAULT_APP_BROKER_LIMITS, ...options.limits, maxPacketBytes: options.maxFrameBytes };
  const maxPending = options.maxPendingMessages ?? DEFAULT_APP_MAX_PENDING;
  const problem = checkAppLimits(limits, maxPending, options.maxFrameBytes);
  if (problem) throw new RangeError(problem);
  const broker = await AppBroker.start(credentials, limits, log, now);
  let listeners: AppListeners;
  try {
    listeners = await AppListeners.start({ ...options, host }, broker, log);
  } catch (err) {
    await broker.close();
    throw err;
  }
  const feed = new AppFeed(credentials.viewKey, broker, maxPending, now, log);
  log.info({ host, ...listeners.ports }, 'app-side subscription listening');
  let closing: Promise<void> | undefined;
  return {
    ports: listeners.ports,
    feed,
    stats: () => ({ ...broker.counters, messagesDroppedBacklog: feed.droppedBacklog, messagesInFlight: feed.inFlight }),
    close() {
      closing ??= (async () => {
        await listeners.close();
        await broker.close();
        log.info({ ...broker.counters, messagesDroppedBacklog: feed.droppedBacklog }, 'app-side subscription closed');
      })();
      return closing;
    },
  };
}
