// The bus operations of one device, at write priority, as the command service needs them.
import type { DeviceIo } from '../core/device-write-types.js';
import type { DeviceConfig } from '../core/config/site-types.js';
import type { Bus } from '../field/modbus/bus.js';
import type { Timers } from '../core/time.js';
import { sleep } from '../core/time.js';
import type { ReadBlock, WriteOp } from '../core/points/codec.js';
import type { Table } from '../core/points/types.js';

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
