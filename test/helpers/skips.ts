// Skips that say why: options for `describe`/`it` (`it(name, skipUnless(ok, reason), fn)`) that
// the summary reporter prints with the reason. A missing Debian peer is no skip under CI=true:
// there the test runs, and its own check fails it naming the package.
import type { TestOptions } from 'vitest';
import { MissingPeerError } from './peers.js';

declare module 'vitest' {
  interface TaskMeta {
    /** Why the test (or every test of the suite) is skipped; printed by summary-reporter.ts. */
    skipReason?: string;
  }
}

/** Runs when `ok`; otherwise skipped, with `reason` in the run's summary. */
export function skipUnless(ok: boolean, reason: string): TestOptions {
  return ok ? {} : { skip: true, meta: { skipReason: reason } };
}

/**
 * Runs when `check` finds the peer (it throws MissingPeerError otherwise). Without it: skipped
 * naming the package, or under CI=true run anyway so the missing peer fails the test.
 */
export function skipWithoutPeer(check: () => unknown, { ci = process.env.CI === 'true' } = {}): TestOptions {
  try {
    check();
    return {};
  } catch (err) {
    if (!(err instanceof MissingPeerError)) throw err;
    return ci ? {} : skipUnless(false, `missing peer: ${err.message}`);
  }
}
