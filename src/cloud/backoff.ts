// Capped exponential backoff with jitter (pure: the random source is passed in).

export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  /** 0..1: fraction of each delay that is randomised (spreads reconnect storms). */
  jitter: number;
}

/** Delay before attempt `attempt` (1 = first retry). */
export function backoffDelay(policy: BackoffPolicy, attempt: number, random: () => number): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 30);
  const base = Math.min(policy.maxMs, policy.initialMs * 2 ** exponent);
  const jitter = Math.min(Math.max(policy.jitter, 0), 1);
  return Math.round(base * (1 - jitter) + base * jitter * random());
}
