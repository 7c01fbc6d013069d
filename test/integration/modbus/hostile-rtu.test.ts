// Hostile RTU writer on a socat pty pair: every attack mode against a healthy unit on the same line.
import { describe, it } from 'vitest';
import { RTU_ATTACKS } from '../../helpers/hostile-modbus.js';
import { expectSurvives } from './hostile-expect.js';

describe('Modbus RTU against a hostile peer on the line', () => {
  it.each(RTU_ATTACKS)('%s: no wrong value, healthy unit keeps polling, recovery after', (mode) => expectSurvives('rtu', mode), 40_000);
});
