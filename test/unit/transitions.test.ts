import { describe, expect, it } from 'vitest';
import { TransitionLog } from '../../src/core/transitions.js';
import type { Logger } from '../../src/ops/log.js';

function recorder() {
  const lines: string[] = [];
  const logger = { warn: (_f: unknown, m: string) => lines.push(`warn ${m}`), info: (_f: unknown, m: string) => lines.push(`info ${m}`) } as unknown as Logger;
  return { lines, log: new TransitionLog(logger) };
}

describe('TransitionLog', () => {
  it('logs a condition once when it starts and once when it ends', () => {
    const { lines, log } = recorder();
    for (const on of [false, true, true, true, false, false, true]) log.update('k', on, 'started', 'ended');
    expect(lines).toEqual(['warn started', 'info ended', 'warn started']);
    expect(log.isActive('k')).toBe(true);
  });

  it('keeps keys apart', () => {
    const { lines, log } = recorder();
    log.update('a', true, 'a on', 'a off');
    log.update('b', true, 'b on', 'b off');
    log.update('a', false, 'a on', 'a off');
    expect(lines).toEqual(['warn a on', 'warn b on', 'info a off']);
  });
});
