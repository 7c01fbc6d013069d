// Cloud work for a unit that is cooling down (issue 28: "wait in the write queue up to
// writes.maxWaitMs, then fail with a reason the cloud sees; never dropped silently"), through the
// command service on a real Bus, against a raw device on a socat pty that stopped answering: a
// push that waited past the bound is logged once, with the device, the point and the reason; the
// `write` and `read` commands fail with 503 and the same reason in the reply the cloud gets;
// nothing is written to the device meanwhile.
import { afterEach, describe, expect, it } from 'vitest';
import { compileDevice } from '../../../src/core/config/compile.js';
import { systemTimers } from '../../../src/core/time.js';
import { CloudValues } from '../../../src/device/cloud-values.js';
import { CommandService } from '../../../src/device/commands.js';
import { BusDeviceIo } from '../../../src/device/device-io.js';
import { ModbusTimeoutError } from '../../../src/field/modbus/errors.js';
import { rtuBusConfig } from '../../helpers/bus-configs.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { deviceConfig, pointConfig } from '../../helpers/device-configs.js';
import { UNIT, X, Y, settle, startLateRig } from '../../helpers/late-path-rig.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const MAX_WAIT_MS = 400;
/** What every refusal says: why, and that it waited its bound in the queue first. */
const REASON = /unit 1 is cooling down after repeated timeouts \(no answer within 300 ms\) \(next probe in \d+ ms\); the request waited \d+ ms in the queue \(writes\.maxWaitMs\)/;

describe('cloud work for a cooling unit past writes.maxWaitMs', () => {
  it('a push is logged once with its reason; write and read commands fail with it; nothing is written', async () => {
    let answering = false;
    const { bus, peer } = await startLateRig(cleanups, 300, { answer: () => (answering ? { afterMs: 0 } : 'silent') }, (path) => rtuBusConfig({
      path, timeoutMs: 300, interFrameDelayMs: 2, cooldown: { afterTimeouts: 1, initialMs: 20_000, maxMs: 20_000 }, writes: { maxWaitMs: MAX_WAIT_MS },
    }));
    const log = captureLogger();
    const device = deviceConfig({ name: 'meter', unitId: UNIT, points: [pointConfig({ id: 'setpoint', address: X, writable: true })] });
    const commands = new CommandService(compileDevice(device), [], new BusDeviceIo(bus, device, systemTimers), log.logger);
    const confirmed: Array<Record<string, unknown>> = [];
    const values = new CloudValues('meter', commands, { onConfirmedValues: (_d, v) => { confirmed.push(v); }, latest: () => ({}) }, log.logger);

    expect(await settle(bus.read(UNIT, 'holding', Y, 2))).toBeInstanceOf(ModbusTimeoutError);
    expect(bus.unitState(UNIT).state).toBe('cooling-down');
    answering = true; // it would answer now: only the cool-down keeps the cloud's work off the line

    await values.apply({ setpoint: 5 }, 'push');
    const refused = log.lines().filter((line) => line.msg === 'cloud write refused');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ device: 'meter', source: 'push', refused: 0, failed: 1, keys: 'setpoint' });
    expect((refused[0]!.reasons as string[])[0]).toMatch(new RegExp(`^setpoint: ${REASON.source}`));
    expect(confirmed).toEqual([]); // the read-back waited and was refused too: nothing reported as the device's

    const write = await commands.runCommand('write', { setpoint: 6 });
    expect(write).toMatchObject({ ok: false, error: { code: 503 } });
    expect(write.ok ? '' : write.error.message).toMatch(new RegExp(`^setpoint: ${REASON.source}`));
    const read = await commands.runCommand('read', { keys: ['setpoint'] });
    expect(read).toMatchObject({ ok: false, error: { code: 503 } });
    expect(read.ok ? '' : read.error.message).toMatch(new RegExp(`^setpoint: ${REASON.source}`));

    expect(peer.requests.filter((r) => r.functionCode === 6 || r.functionCode === 16)).toEqual([]);
    expect(log.count('cloud write refused')).toBe(2); // the push and the write command: one line each
  }, 30_000);
});
