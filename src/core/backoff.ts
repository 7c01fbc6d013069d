// The one capped exponential backoff with jitter (pure: the random source is passed in), used by
// bus reopens, stream relays, cloud link reconnects and interface A/B retries.
import type { BackoffConfig } from './config/site-types.js';

/**
 * Delay before retry `retry`, counted from 0 (the first retry waits about `initialMs`):
 * initialMs * 2^retry, capped at maxMs, then reduced by `jitter * random()` of itself (random in
 * 0..1), so that gateways or devices restarted together do not retry in step. Never above the cap.
 */
export function backoffDelay(policy: BackoffConfig, retry: number, random: () => number): number {
  const exponent = Math.min(Math.max(0, retry), 30);
  const base = Math.min(policy.maxMs, policy.initialMs * 2 ** exponent);
  const jitter = Math.min(1, Math.max(0, policy.jitter));
  return Math.max(0, Math.round(base * (1 - jitter * random())));
}
