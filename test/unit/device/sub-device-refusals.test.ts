// Refused sub-device reports: counted per device, one warning when a device starts being refused and
// one line when it is accepted again (never one per batch); answers matched to batches in order, and
// acceptance no longer inferred once an answer shows the cloud skips batches.
import { describe, expect, it } from 'vitest';
import { SubDeviceRefusals } from '../../../src/device/sub-device-refusals.js';
import { captureLogger } from '../../helpers/capture-logger.js';

const NAMES = new Map([['a/1', 'm1'], ['a/2', 'm2'], ['b/1', 'm3']]);

function rig() {
  const log = captureLogger();
  const refusals = new SubDeviceRefusals(log.logger, (address) => NAMES.get(address));
  const warnings = () => log.lines().filter((l) => l.msg === 'cloud refuses the reports of a sub-device').map((l) => [l.device, l.subDevice]);
  const recoveries = () => log.lines().filter((l) => l.msg === 'cloud accepts the reports of a sub-device again').map((l) => [l.device, l.reportsRefused]);
  return { refusals, warnings, recoveries };
}

describe('sub-device refusals', () => {
  it('a hundred refused batches: one warning per device, every report counted', () => {
    const { refusals, warnings } = rig();
    for (let i = 0; i < 100; i += 1) {
      refusals.batchSent(['a/1', 'a/2', 'b/1']);
      refusals.answer(false, ['b/1'], 404, 'sub-device address not bound to this gateway: "b/1"');
    }
    expect(warnings()).toEqual([['m3', 'b/1']]);
    expect(refusals.status('m3', 'b/1')).toEqual({ address: 'b/1', reportsRefused: 100, refused: true });
    expect(refusals.status('m1', 'a/1')).toEqual({ address: 'a/1', reportsRefused: 0, refused: false });
  });

  it('accepted again once a batch carrying it is answered with success; refused again warns again', () => {
    const { refusals, warnings, recoveries } = rig();
    refusals.batchSent(['b/1']);
    refusals.answer(false, ['b/1'], 404, 'not bound');
    refusals.batchSent(['a/1']);
    refusals.answer(true, [], 0, '');
    expect(recoveries()).toEqual([]);
    refusals.batchSent(['a/1', 'b/1']);
    refusals.answer(true, [], 0, '');
    expect(recoveries()).toEqual([['m3', 1]]);
    refusals.batchSent(['b/1']);
    refusals.answer(false, [], 404, 'not bound');
    expect(warnings()).toEqual([['m3', 'b/1'], ['m3', 'b/1']]);
    expect(refusals.status('m3', 'b/1')).toMatchObject({ reportsRefused: 2, refused: true });
  });

  it('an answer naming an address its batch did not carry: counted, but acceptance no longer inferred until the next connect', () => {
    const { refusals, recoveries } = rig();
    refusals.batchSent(['a/1']);
    refusals.batchSent(['b/1']);
    refusals.answer(false, ['b/1'], 404, 'not bound'); // the first batch's answer never came
    refusals.batchSent(['b/1']);
    refusals.answer(true, [], 0, '');
    expect(recoveries()).toEqual([]);
    expect(refusals.status('m3', 'b/1')).toMatchObject({ reportsRefused: 1, refused: true });
    refusals.reset();
    refusals.batchSent(['b/1']);
    refusals.answer(true, [], 0, '');
    expect(recoveries()).toEqual([['m3', 1]]);
  });

  it('addresses that are none of its sub-devices are ignored; a removed device is forgotten', () => {
    const { refusals, warnings } = rig();
    refusals.batchSent(['a/1']);
    refusals.answer(false, ['zz', 'a/1'], 404, 'not bound');
    expect(warnings()).toEqual([['m1', 'a/1']]);
    refusals.forget('m1');
    expect(refusals.status('m1', 'a/1')).toEqual({ address: 'a/1', reportsRefused: 0, refused: false });
  });
});
