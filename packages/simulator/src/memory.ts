// A unit's four Modbus tables, stored in pages so a full 65536-address map costs only what is used.
import type { Table } from 'fieldgate/workspace-kit';

const PAGE_BITS = 8;
const PAGE_SIZE = 1 << PAGE_BITS;
export const FULL_ADDRESS_SPACE = 65536;

/** One table: addresses 0..size-1, 16-bit values (bit tables hold 0/1). Unwritten addresses read 0. */
export class RegisterBank {
  private readonly pages = new Map<number, Uint16Array>();
  /** Values a register holds only for a read of that register alone (a device's identification code sharing a measurement's register). */
  private readonly alone = new Map<number, number>();

  constructor(readonly size: number = FULL_ADDRESS_SPACE) {
    if (!Number.isInteger(size) || size < 1 || size > FULL_ADDRESS_SPACE) {
      throw new RangeError(`table size ${size} outside 1..${FULL_ADDRESS_SPACE}`);
    }
  }

  /** True when every address of [address, address + count) exists. */
  covers(address: number, count: number): boolean {
    return address >= 0 && count >= 0 && address + count <= this.size;
  }

  get(address: number): number {
    const page = this.pages.get(address >>> PAGE_BITS);
    return page === undefined ? 0 : page[address & (PAGE_SIZE - 1)];
  }

  /** What a read of `address` alone returns. */
  getAlone(address: number): number {
    return this.alone.get(address) ?? this.get(address);
  }

  setAlone(address: number, value: number): void {
    if (!this.covers(address, 1)) throw new RangeError(`address ${address} outside 0..${this.size - 1}`);
    this.alone.set(address, value);
  }

  set(address: number, value: number): void {
    if (!this.covers(address, 1)) throw new RangeError(`address ${address} outside 0..${this.size - 1}`);
    const index = address >>> PAGE_BITS;
    let page = this.pages.get(index);
    if (page === undefined) {
      if (value === 0) return;
      page = new Uint16Array(PAGE_SIZE);
      this.pages.set(index, page);
    }
    page[address & (PAGE_SIZE - 1)] = value;
  }
}

export type TableSizes = Partial<Record<Table, number>>;

export class UnitMemory {
  readonly coil: RegisterBank;
  readonly discrete: RegisterBank;
  readonly holding: RegisterBank;
  readonly input: RegisterBank;

  constructor(sizes: TableSizes = {}) {
    this.coil = new RegisterBank(sizes.coil);
    this.discrete = new RegisterBank(sizes.discrete);
    this.holding = new RegisterBank(sizes.holding);
    this.input = new RegisterBank(sizes.input);
  }

  table(table: Table): RegisterBank {
    return this[table];
  }
}
