// The closing summary names why each test was skipped (test/helpers/summary-reporter.ts): the
// reason given by skipUnless/skipWithoutPeer on the test or a suite around it, or ctx.skip(note).
import { describe, expect, it } from 'vitest';
import type { TestCase } from 'vitest/node';
import { skipUnless, skipWithoutPeer } from '../helpers/skips.js';
import { MissingPeerError } from '../helpers/peers.js';
import { skipLines } from '../helpers/summary-reporter.js';

interface Node { type: 'module' | 'suite' | 'test'; meta: { skipReason?: string }; parent?: Node }

/** Just what the reporter reads of a skipped TestCase. */
function skippedTest(name: string, { note, reason, suiteReason, mode = 'skip' }: { note?: string; reason?: string; suiteReason?: string; mode?: string } = {}): TestCase {
  const module: Node = { type: 'module', meta: {} };
  const suite: Node = { type: 'suite', meta: suiteReason === undefined ? {} : { skipReason: suiteReason }, parent: module };
  return {
    type: 'test', fullName: `suite > ${name}`, parent: { ...suite, meta: () => suite.meta, parent: { ...module, meta: () => module.meta } },
    module: { relativeModuleId: 'test/x.test.ts' }, options: { mode },
    meta: () => (reason === undefined ? {} : { skipReason: reason }),
    result: () => ({ state: 'skipped', errors: undefined, note }),
  } as unknown as TestCase;
}

describe('skipLines', () => {
  it.each<{ what: string; tests: TestCase[]; lines: string[] }>([
    { what: 'nothing skipped', tests: [], lines: [] },
    { what: 'the test\'s own reason', tests: [skippedTest('a', { reason: 'needs root' })], lines: ['skipped 1: needs root: test/x.test.ts > suite > a'] },
    { what: 'a suite\'s reason for each of its tests, grouped', tests: [skippedTest('a', { suiteReason: 'no tmpfs' }), skippedTest('b', { suiteReason: 'no tmpfs' })], lines: ['skipped 2: no tmpfs: test/x.test.ts > suite > a; test/x.test.ts > suite > b'] },
    { what: 'ctx.skip(note) first', tests: [skippedTest('a', { note: 'from the test body', reason: 'options' })], lines: ['skipped 1: from the test body: test/x.test.ts > suite > a'] },
    { what: 'a todo', tests: [skippedTest('a', { mode: 'todo' })], lines: ['skipped 1: todo: test/x.test.ts > suite > a'] },
    { what: 'a plain it.skip says it gave no reason', tests: [skippedTest('a')], lines: ['skipped 1: no reason given (it.skip, a name filter or .only): test/x.test.ts > suite > a'] },
    {
      what: 'many: five names, then a count',
      tests: ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((n) => skippedTest(n, { reason: 'r' })),
      lines: [`skipped 7: r: ${['a', 'b', 'c', 'd', 'e'].map((n) => `test/x.test.ts > suite > ${n}`).join('; ')}; and 2 more`],
    },
  ])('$what', ({ tests, lines }) => {
    expect(skipLines(tests)).toEqual(lines);
  });
});

describe('skip options', () => {
  it('skip with the reason only when the condition fails', () => {
    expect(skipUnless(true, 'r')).toEqual({});
    expect(skipUnless(false, 'r')).toEqual({ skip: true, meta: { skipReason: 'r' } });
  });

  it('skip for a missing peer naming its package, but under CI=true run so the test fails', () => {
    const missing = () => { throw new MissingPeerError('socat not found on PATH', 'socat'); };
    expect(skipWithoutPeer(missing, { ci: false })).toEqual({ skip: true, meta: { skipReason: expect.stringMatching(/^missing peer: socat not found on PATH: .*install the Debian package socat/) } });
    expect(skipWithoutPeer(missing, { ci: true })).toEqual({});
    expect(skipWithoutPeer(() => '/usr/bin/socat', { ci: false })).toEqual({});
    expect(() => skipWithoutPeer(() => { throw new Error('a bug'); })).toThrow('a bug');
  });
});
