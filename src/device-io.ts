// The bus operations of one device, at write priority, as the command service needs them.
import type { DeviceIo } from './device-write-types.js';
import type { DeviceConfig } from './config/site-types.js';
import type { Bus } from './modbus/bus.js';
import type { Timers } from './time.js';
import { sleep } from './time.js';
import type { ReadBlock, WriteOp } from './points/codec.js';
import type { Table } from './points/types.js';

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
