// `npm test` runs two vitest runs at once and adds their closing lines (test/helpers/split-run.ts):
// each run here is a real child process printing what a vitest run prints.
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runGroups, type RunGroup } from '../helpers/split-run.js';
import { parseSummary } from '../helpers/suite-summary.js';

/** A child that prints `lines` (stdout), `errors` (stderr) and exits with `code`. */
function child(name: string, lines: string[], { errors = [] as string[], code = 0 } = {}): RunGroup {
  const script = `${lines.map((l) => `console.log(${JSON.stringify(l)});`).join('')}${errors.map((l) => `console.error(${JSON.stringify(l)});`).join('')}process.exitCode=${code};`;
  return { name, command: [process.execPath, '-e', script] };
}

async function run(groups: RunGroup[]): Promise<{ out: string[]; err: string[]; failed: number }> {
  const out: string[] = [];
  const err: string[] = [];
  const total = await runGroups(groups, process.env, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { out, err, failed: total.failed };
}

describe('parseSummary', () => {
  it.each<[string, ReturnType<typeof parseSummary>]>([
    ['vitest: 12 passed, 0 failed, 1 skipped', { passed: 12, failed: 0, skipped: 1 }],
    ['vitest: 0 passed, 3 failed, 0 skipped', { passed: 0, failed: 3, skipped: 0 }],
    [' vitest: 1 passed, 0 failed, 0 skipped', undefined],
    ['vitest: 1 passed, 0 failed, 0 skipped (and more)', undefined],
    ['calm: 1 passed, 0 failed, 0 skipped', undefined],
    ['', undefined],
  ])('%j', (line, expected) => {
    expect(parseSummary(line)).toEqual(expected);
  });
});

describe('runGroups', () => {
  it('adds the closing lines into one, the last line, and passes every other line on whole', async () => {
    const { out, err, failed } = await run([
      child('calm', ['a line of calm', 'vitest: 3 passed, 0 failed, 1 skipped'], { errors: ['calm on stderr'] }),
      child('busy', ['a line of busy', 'vitest: 5 passed, 2 failed, 0 skipped'], { code: 1 }),
    ]);
    expect(out).toContain('a line of calm');
    expect(out).toContain('a line of busy');
    expect(err).toEqual(['calm on stderr']);
    expect(out.slice(-3)).toEqual(['calm: 3 passed, 0 failed, 1 skipped', 'busy: 5 passed, 2 failed, 0 skipped', 'vitest: 8 passed, 2 failed, 1 skipped']);
    expect(out.filter((l) => l.startsWith('vitest:'))).toHaveLength(1);
    expect(failed).toBe(2);
  });

  it('a run that ends without its closing line is one failure, and says so', async () => {
    const { out } = await run([child('calm', ['vitest: 2 passed, 0 failed, 0 skipped']), child('busy', ['crashed before its summary'], { code: 7 })]);
    expect(out).toContain('the busy run ended without its summary (exit 7): counted as one failure');
    expect(out.at(-1)).toBe('vitest: 2 passed, 1 failed, 0 skipped');
  });

  it('a run that exits non-zero after a clean closing line (a leftover found at teardown) is one failure', async () => {
    const { out } = await run([child('calm', ['vitest: 2 passed, 0 failed, 0 skipped'], { code: 1 })]);
    expect(out).toContain('the calm run exited 1 after its summary: counted as one failure');
    expect(out.at(-1)).toBe('vitest: 2 passed, 1 failed, 0 skipped');
  });

  it('a run whose program is missing is one failure, named', async () => {
    const { out, err } = await run([{ name: 'busy', command: ['/nonexistent/fieldgate-no-such-program'] }]);
    expect(err.join('\n')).toContain('the busy run did not start');
    expect(out.at(-1)).toBe('vitest: 0 passed, 1 failed, 0 skipped');
  });

  it('runs the groups at once (each waits for the other to have started)', async () => {
    // Each child creates its own file, then waits (bounded) for the other's: one after the other would time out.
    const dir = `/tmp/fieldgate-split-${process.pid}-${Date.now()}`;
    const script = (mine: string, theirs: string) =>
      `const fs=require('fs');fs.mkdirSync(${JSON.stringify(dir)},{recursive:true});fs.writeFileSync(${JSON.stringify(`${dir}/`)}+${JSON.stringify(mine)},'');`
      + `const end=Date.now()+20000;(function w(){if(fs.existsSync(${JSON.stringify(`${dir}/`)}+${JSON.stringify(theirs)})){console.log('vitest: 1 passed, 0 failed, 0 skipped');return;}`
      + `if(Date.now()>end){console.log('vitest: 0 passed, 1 failed, 0 skipped');return;}setTimeout(w,20);})();`;
    const { out } = await run([
      { name: 'calm', command: [process.execPath, '-e', script('calm', 'busy')] },
      { name: 'busy', command: [process.execPath, '-e', script('busy', 'calm')] },
    ]).finally(() => rmSync(dir, { recursive: true, force: true }));
    expect(out.at(-1)).toBe('vitest: 2 passed, 0 failed, 0 skipped');
  });
});
