// Capped exponential back-off with jitter (pure: randomness passed in).
import type { BackoffConfig } from '../config/site-types.js';

/**
 * Delay before reopen attempt `attempt` (0-based): initialMs * 2^attempt, capped at maxMs, then
 * reduced by up to `jitter` of itself so that gateways restarted together do not retry in step.
 */
export function backoffDelay(config: BackoffConfig, attempt: number, random: () => number): number {
  const exponent = Math.min(Math.max(0, attempt), 30);
  const base = Math.min(config.maxMs, config.initialMs * 2 ** exponent);
  const jitter = Math.min(1, Math.max(0, config.jitter));
  return Math.max(0, Math.round(base * (1 - jitter * random())));
}
