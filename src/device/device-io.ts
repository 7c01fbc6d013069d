// The bus operations of one device, at write priority, as the command service needs them.
import type { DeviceIo } from '../core/device-write-types.js';
import type { DeviceConfig } from '../core/config/site-types.js';
import type { Bus } from '../field/modbus/bus.js';
import type { Timers } from '../core/time.js';
import { sleep } from '../core/time.js';
import type { ReadBlock, WriteOp } from '../core/points/codec.js';
import type { Table } from '../core/points/types.js';

/** Why an operation of a replaced device's old command path was refused. */
export class DeviceReplacedError extends Error {
  constructor(device: string) {
    super(`device ${device} was replaced by a reload: its old point map no longer reaches the bus`);
    this.name = 'DeviceReplacedError';
  }
}

/**
 * A device's bus operations that can be fenced off: once retired (its device replaced by a
 * reload), every operation not yet started is refused, so nothing of the old point map is written
 * or read after the switch.
 */
export class RetirableIo implements DeviceIo {
  private retired = false;

  constructor(private readonly inner: DeviceIo, private readonly device: string) {}

  retire(): void {
    this.retired = true;
  }

  read(table: Table, start: number, count: number): Promise<ReadBlock> {
    return this.retired ? Promise.reject(new DeviceReplacedError(this.device)) : this.inner.read(table, start, count);
  }

  write(op: WriteOp): Promise<void> {
    return this.retired ? Promise.reject(new DeviceReplacedError(this.device)) : this.inner.write(op);
  }

  sleep(ms: number): Promise<void> {
    return this.inner.sleep(ms);
  }
}

export class BusDeviceIo implements DeviceIo {
  constructor(private readonly bus: Bus, private readonly device: DeviceConfig, private readonly timers: Timers) {}

  read(table: Table, start: number, count: number): Promise<ReadBlock> {
    // Read-backs of a cloud write are part of the write: they jump ahead of polls too.
    return this.bus.read(this.device.unitId, table, start, count, { priority: 'high' });
  }

  async write(op: WriteOp): Promise<void> {
    const forceMulti = this.device.limits.forceMultiWrite;
    const unit = this.device.unitId;
    switch (op.kind) {
      case 'coil':
        return this.bus.writeCoils(unit, op.address, [op.value], { forceMulti });
      case 'registers':
        return this.bus.writeRegisters(unit, op.address, op.words, { forceMulti });
      case 'bit':
        return this.bus.writeBit(unit, op.address, op.bit, op.value, { forceMulti });
    }
  }

  sleep(ms: number): Promise<void> {
    return sleep(this.timers, ms);
  }
}
