// The read-plan learner's public shapes (read-plan-learner.ts): what it learned, as status shows
// it, and one cycle's plan.
import type { PointConfig } from '../core/config/site-types.js';
import type { ReadRequest } from '../core/modbus/plan.js';
import type { Table } from '../core/points/types.js';

export interface LearnedLimit {
  table: Table;
  /**
   * `split`: no request crosses `address`; `isolated`: the point at `address` is refused alone;
   * `max-count`: requests in this table are at most `count` registers (or bits) long.
   */
  kind: 'split' | 'isolated' | 'max-count';
  address?: number;
  count?: number;
  point?: string;
  reason: string;
}

export interface CyclePlan {
  /** Requests to run now: the regular plan, then the isolated points whose probe is due. */
  requests: ReadRequest[];
  /** Isolated points not probed this cycle, with why they were isolated. */
  waiting: Array<{ point: PointConfig; reason: string }>;
}

/** Why a request is sent as its two halves instead of whole. */
export type SplitReason = 'timed-out' | 'too-long';
