// A bus's queue outcomes are visible in /status: requests refused because the queue was full,
// cancelled by their owner (a share client or page request gone, a device removed) and expired
// past their queue deadline (docs/engine.md, docs/share.md: "`cancelled` in the share's and the
// bus's status"). A process run as a service has no other view of them: none is logged one by one.
import { describe, expect, it } from 'vitest';
import { busStatusOf } from '../../../src/ops/status-assembly.js';
import type { BusStats } from '../../../src/field/modbus/bus-stats.js';

const stats: BusStats = {
  bus: 'line1', state: 'up', queueDepth: 3, inFlight: 1, transactions: 40, timeouts: 0, timeoutRepeats: 0, exceptions: 0, busyRetries: 0,
  frameErrors: 0, otherErrors: 0, cooldownRejects: 0, downRejects: 0, queueRejects: 2, cancelled: 17, expired: 5, busyTimeMs: 100, reconnects: 0,
  unitsCoolingDown: 0, goodReplies: 40, discardedReplies: 0, silenceReopens: 0, lateReplies: 0, lateGuardRejects: 0, lateUnits: [],
};

describe('bus queue outcomes in /status', () => {
  it('shows queueRejects, cancelled and expired of each bus', () => {
    expect(busStatusOf(stats, 'tcp', 10_000)).toMatchObject({ queueDepth: 3, queueRejects: 2, cancelled: 17, expired: 5 });
  });
});
