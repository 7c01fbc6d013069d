// A serial open that completes only after its timeout must not keep the port locked: every
// reopen would then fail with "Cannot lock port" (seen under a heavily loaded CPU).
import ModbusPkg from 'modbus-serial';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PortOpenError } from '../../../src/field/modbus/errors.js';
import { createModbusTransport } from '../../../src/field/modbus/transport.js';
import { rtuBusConfig } from '../../helpers/bus-configs.js';
import { startPtyPair } from '../../helpers/socat.js';
import { waitFor } from '../../helpers/wait.js';

const ModbusRTU = ModbusPkg.default;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('serial open slower than its timeout', () => {
  it('closes the late port once it opens, so the next open gets the line', async () => {
    const pair = await startPtyPair();
    cleanups.push(() => pair.stop());
    const config = rtuBusConfig({ path: pair.a, timeoutMs: 100 });
    const realOpen = ModbusRTU.prototype.open;
    let lateOpenDone = false;
    // The first open takes 3.5 s, beyond the 3 s minimum open timeout, then really opens the pty.
    vi.spyOn(ModbusRTU.prototype, 'open').mockImplementationOnce(function (this: InstanceType<typeof ModbusRTU>, callback?: Function) {
      setTimeout(() => {
        realOpen.call(this, (err?: unknown) => {
          lateOpenDone = err === undefined || err === null;
          (callback as ((err?: unknown) => void) | undefined)?.(err);
        });
      }, 3500);
    });
    const slow = createModbusTransport(config);
    const err = await slow.open().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PortOpenError);
    expect(String((err as Error).message)).toMatch(/no connection within 3000 ms/);
    await waitFor(() => lateOpenDone, { what: 'the late open to complete', timeoutMs: 5000 });

    const next = createModbusTransport(config);
    cleanups.push(() => next.close());
    await waitFor(async () => { try { await next.open(); return true; } catch { return false; } }, { what: 'a second open of the same pty', timeoutMs: 5000 });
  });
});
