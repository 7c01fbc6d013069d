// IdentityCheck against a scripted bus: when the model is read (first cycle, after offline, every
// cycle while another model), what each answer makes of the device, and that each change is logged once.
import { describe, expect, it } from 'vitest';
import { IdentityCheck } from '../../../src/device/identity-check.js';
import type { PollBus } from '../../../src/device/poll-cycle.js';
import { ModbusExceptionError, ModbusTimeoutError, UnitCoolingDownError, UnitLateReplyPendingError } from '../../../src/field/modbus/errors.js';
import { readProfileDoc } from '../../../src/core/config/profile-doc.js';
import type { DeviceIdentification } from '../../../src/core/config/site-types.js';
import { captureLogger } from '../../helpers/capture-logger.js';

function registersOf(code: number) {
  const profile = readProfileDoc({
    name: 'acme-pm1', vendor: 'ACME', model: 'PM1', source: { title: 't', version: 'v', table: 't' },
    identification: { registers: [{ label: 'model code', table: 'holding', address: 256, type: 'uint16', values: [code] }] },
    points: [{ id: 'v', table: 'input', address: 0, type: 'float32' }],
  }, 'acme-pm1', 'acme-pm1.yaml', []);
  return [...profile!.identification!.registers];
}

const identification: DeviceIdentification = { profiles: ['acme-pm1'], registers: registersOf(100), others: [{ name: 'acme-pm2', registers: registersOf(200) }] };

/** Answers 256 with `code` (a number), a timeout, or an exception; counts the reads. */
class ScriptedBus implements PollBus {
  answer: number | 'timeout' | 'refused' | 'guarded' | 'cooling' = 100;
  reads = 0;
  async read(unit: number, table: 'holding' | 'input' | 'coil' | 'discrete', start: number, count: number) {
    this.reads += 1;
    if (this.answer === 'timeout') throw new ModbusTimeoutError(unit, 300);
    if (this.answer === 'guarded') throw new UnitLateReplyPendingError(unit, 9000);
    if (this.answer === 'cooling') throw new UnitCoolingDownError(unit, 5000);
    if (this.answer === 'refused') throw new ModbusExceptionError(unit, 2);
    return { table, start, words: new Uint16Array(count).fill(this.answer) };
  }
}

function setup() {
  const log = captureLogger();
  return { log, bus: new ScriptedBus(), check: new IdentityCheck(identification, log.logger) };
}

describe('IdentityCheck', () => {
  it('reads the model at the first cycle only, until the device was offline', async () => {
    const { bus, check, log } = setup();
    expect(await check.beforeCycle(bus, 1)).toBeUndefined();
    check.afterCycle(true);
    expect(check.status()).toEqual({ state: 'identified', profiles: ['acme-pm1'] });
    for (let i = 0; i < 3; i++) await check.beforeCycle(bus, 1);
    expect(bus.reads).toBe(1);
    check.recheck();
    await check.beforeCycle(bus, 1);
    expect(bus.reads).toBe(2);
    // Still identified: not logged again.
    expect(log.count('device identified as its profile\'s model')).toBe(1);
  });

  it('refuses another model, names it, reads again every cycle, and logs the change once', async () => {
    const { bus, check, log } = setup();
    bus.answer = 200;
    const refused = await check.beforeCycle(bus, 1);
    expect(refused?.message).toBe('identifies as acme-pm2, not acme-pm1: not polled (model code is 200, the profile\'s model shows 100); set identify: false on the device if it is right');
    expect(check.status()).toEqual({ state: 'other-model', profiles: ['acme-pm1'], identifiedAs: ['acme-pm2'], detail: 'model code is 200, the profile\'s model shows 100' });
    bus.answer = 300;
    const unknownModel = await check.beforeCycle(bus, 1);
    expect(unknownModel?.message).toMatch(/^identifies as another model, not acme-pm1/);
    expect(check.status()?.identifiedAs).toEqual([]);
    await check.beforeCycle(bus, 1);
    expect(bus.reads).toBe(3);
    expect(log.count('device identifies as another model: not polled')).toBe(2);
    bus.answer = 100;
    expect(await check.beforeCycle(bus, 1)).toBeUndefined();
    expect(check.status()?.state).toBe('identified');
  });

  it('polls a device that refuses the register as unverified, logged once, and asks again only after offline', async () => {
    const { bus, check, log } = setup();
    bus.answer = 'refused';
    expect(await check.beforeCycle(bus, 1)).toBeUndefined();
    expect(check.status()).toMatchObject({ state: 'unverified', detail: 'model code: refused (Illegal data address)' });
    await check.beforeCycle(bus, 1);
    expect(bus.reads).toBe(1);
    check.recheck();
    await check.beforeCycle(bus, 1);
    expect(log.count('device did not identify itself: polled as its profile')).toBe(1);
  });

  it('takes a silent device for offline: no verdict, asked again, until its points read', async () => {
    const { bus, check, log } = setup();
    bus.answer = 'timeout';
    for (let i = 0; i < 3; i++) {
      expect(await check.beforeCycle(bus, 1)).toBeUndefined();
      check.afterCycle(false);
    }
    expect(check.status()).toBeUndefined();
    expect(bus.reads).toBe(3);
    // The points read though the register stays silent: polled, unverified, not asked again.
    await check.beforeCycle(bus, 1);
    check.afterCycle(true);
    expect(check.status()).toMatchObject({ state: 'unverified', detail: expect.stringMatching(/^model code: no answer/) });
    await check.beforeCycle(bus, 1);
    expect(bus.reads).toBe(4);
    expect(log.count('device did not identify itself: polled as its profile')).toBe(1);
  });

  it.each(['guarded', 'cooling'] as const)('a read the bus kept from the device (%s) decides nothing: asked again, another model still refused', async (kept) => {
    const { bus, check } = setup();
    bus.answer = kept;
    expect(await check.beforeCycle(bus, 1)).toBeUndefined();
    check.afterCycle(true); // the points read meanwhile (other reply shapes): not "unverified" for it
    expect(check.status()).toBeUndefined();
    bus.answer = 200;
    expect((await check.beforeCycle(bus, 1))?.message).toMatch(/^identifies as acme-pm2, not acme-pm1/);
    expect(check.status()?.state).toBe('other-model');
    expect(bus.reads).toBe(2);
  });
});
