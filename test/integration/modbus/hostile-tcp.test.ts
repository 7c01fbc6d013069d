// Hostile Modbus TCP peer: every attack mode against a healthy unit on the same connection.
import { describe, it } from 'vitest';
import { TCP_ATTACKS } from '../../helpers/hostile-modbus.js';
import { expectSurvives } from './hostile-expect.js';

describe('Modbus TCP against a hostile peer', () => {
  it.each(TCP_ATTACKS)('%s: no wrong value, healthy unit keeps polling, recovery after', (mode) => expectSurvives('tcp', mode), 40_000);

  it('keeps requests to one unit apart with maxInFlight 4 while a peer is hostile', () =>
    expectSurvives('tcp', 'wrong-transaction', { pollIntervalMs: 50, maxInFlight: 4 }), 40_000);
});
