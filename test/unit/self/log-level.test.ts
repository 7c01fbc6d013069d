// The temporary level on a real pino root: component loggers made without their own level follow it.
import { describe, expect, it } from 'vitest';
import { TemporaryLogLevel, rootLevelControl } from '../../../src/ops/self/log-level.js';
import { componentLogger } from '../../../src/ops/log.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { ManualClock } from '../../helpers/manual-clock.js';

describe('temporary log level', () => {
  it('turns debug on for existing child loggers and off again after the duration', () => {
    const clock = new ManualClock();
    const captured = captureLogger();
    const root = captured.logger;
    root.level = 'info';
    const bus = componentLogger(root, 'bus').child({ bus: 'line1' });
    const temporary = new TemporaryLogLevel(rootLevelControl(root), clock, root.child({ component: 'self' }));
    bus.debug('before');
    temporary.set('debug', 10_000);
    bus.debug('during');
    clock.advance(10_000);
    bus.debug('after');
    expect(captured.lines().map((l) => l.msg)).toEqual(['log level changed temporarily', 'during', 'log level restored']);
    expect(captured.lines()[0]).toMatchObject({ level: 40, logLevel: 'debug', previousLevel: 'info', durationMs: 10_000 });
    expect(captured.lines()[2]).toMatchObject({ level: 40, logLevel: 'info', temporaryLevel: 'debug', reason: 'expired' });
  });

  it('going quieter still logs both changes; revert on stop cancels the timer', () => {
    const clock = new ManualClock();
    const captured = captureLogger();
    captured.logger.level = 'info';
    const temporary = new TemporaryLogLevel(rootLevelControl(captured.logger), clock, captured.logger);
    temporary.set('warn', 60_000);
    captured.logger.info('hidden');
    temporary.revert();
    expect(captured.logger.level).toBe('info');
    expect(clock.sleeping).toBe(0);
    expect(captured.lines().map((l) => l.msg)).toEqual(['log level changed temporarily', 'log level restored']);
    temporary.revert();
    expect(captured.count('log level restored')).toBe(1);
  });
});
