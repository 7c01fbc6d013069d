// Prints the plain closing line CI reads: "vitest: N passed, N failed, N skipped", and above it
// every skipped test with its reason (skips.ts), and any process the run left running (killed,
// and counted as a failure). A test file that fails to import counts as one failure.
import type { Reporter, TestCase, TestModule } from 'vitest/node';
import { describeLeftovers, reapLeftovers, RUN_MARKER } from './leftovers.js';
import './skips.js'; // TaskMeta.skipReason
import { formatSummary } from './suite-summary.js';

const NAMES_PER_REASON = 5;

/** The reason a skipped test gives: ctx.skip(note), or skipReason on it or an enclosing suite. */
export function skipReason(test: TestCase): string {
  const result = test.result();
  if (result.state === 'skipped' && result.note) return result.note;
  for (let node: TestCase | TestCase['parent'] = test; ; node = node.parent) {
    const reason = node.meta().skipReason;
    if (reason !== undefined) return reason;
    if (node.type === 'module') break;
  }
  return test.options.mode === 'todo' ? 'todo' : 'no reason given (it.skip, a name filter or .only)';
}

/** Skipped tests grouped by reason, a few names each: `skipped 3: <reason>: a; b; c`. */
export function skipLines(skipped: ReadonlyArray<TestCase>): string[] {
  const byReason = new Map<string, string[]>();
  for (const test of skipped) {
    const reason = skipReason(test);
    byReason.set(reason, [...(byReason.get(reason) ?? []), `${test.module.relativeModuleId} > ${test.fullName}`]);
  }
  return [...byReason].map(([reason, names]) => {
    const more = names.length > NAMES_PER_REASON ? `; and ${names.length - NAMES_PER_REASON} more` : '';
    return `skipped ${names.length}: ${reason}: ${names.slice(0, NAMES_PER_REASON).join('; ')}${more}`;
  });
}

export default class SummaryReporter implements Reporter {
  async onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): Promise<void> {
    let passed = 0;
    let failed = 0;
    const skipped: TestCase[] = [];
    for (const mod of testModules) {
      let tests = 0;
      for (const test of mod.children.allTests()) {
        tests += 1;
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped.push(test);
      }
      if (tests === 0 && mod.state() === 'failed') failed += 1;
    }
    failed += unhandledErrors.length;
    const lines = skipLines(skipped);
    const runId = process.env[RUN_MARKER];
    const left = runId === undefined ? [] : await reapLeftovers(runId);
    if (left.length > 0) {
      lines.push(describeLeftovers(left));
      failed += 1;
      process.exitCode = 1;
    }
    process.stdout.write(`\n${lines.map((l) => `${l}\n`).join('')}${formatSummary({ passed, failed, skipped: skipped.length })}\n`);
  }
}
