// The closing line of a vitest run (summary-reporter.ts prints it, CI reads it), read back and
// added up when `npm test` runs the suite as two vitest runs at once (test/run-suite.ts).

export interface RunSummary {
  passed: number;
  failed: number;
  skipped: number;
}

const SUMMARY_LINE = /^vitest: (\d+) passed, (\d+) failed, (\d+) skipped$/;

export function formatSummary({ passed, failed, skipped }: RunSummary): string {
  return `vitest: ${passed} passed, ${failed} failed, ${skipped} skipped`;
}

/** The counts of a closing line, or undefined for any other line. */
export function parseSummary(line: string): RunSummary | undefined {
  const m = SUMMARY_LINE.exec(line);
  return m ? { passed: Number(m[1]), failed: Number(m[2]), skipped: Number(m[3]) } : undefined;
}

export function addSummaries(a: RunSummary, b: RunSummary): RunSummary {
  return { passed: a.passed + b.passed, failed: a.failed + b.failed, skipped: a.skipped + b.skipped };
}
