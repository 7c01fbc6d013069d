// The sub-device addresses this state directory announced, by device name, in
// `<stateDir>/sub-device-addresses.json`: read at start (and by `validate`) so every device keeps
// its address across restarts and upgrades (core/config/sub-device-addresses.ts), written at start
// and after each applied reload. Addresses no device uses any more stay in it (`released`, with the
// device last announced under each and when), so no other device takes one unasked
// (core/config/address-reuse.ts). A state directory a version before the record ran on (an outbox
// but no record) announced the addresses of that version's rule.
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { addressHolders, checkAddressReuse, type AddressHolder, type AddressReuse } from '../core/config/address-reuse.js';
import type { Config } from '../core/config/config.js';
import { legacySubDeviceAddresses } from '../core/config/gateway-mode.js';
import { pinSubDeviceAddresses, subDeviceAddressesOf, type PinnedAddresses } from '../core/config/sub-device-addresses.js';
import type { ConfigIssue } from '../core/config/site-types.js';
import type { Logger } from '../core/logger.js';
import { systemTime, type TimeWithWall } from '../core/time.js';

export const ADDRESS_RECORD_FILE = 'sub-device-addresses.json';
/** Written by every version, so its presence shows a fieldgate ran on the directory before. */
const OUTBOX_FILE = 'outbox.sqlite';

export type AnnouncedSource = 'record' | 'previous-version' | 'none';

export interface AnnouncedAddresses {
  addresses: Map<string, string>;
  /** Address -> the device last announced under it, for addresses no device in `addresses` uses. */
  released: Map<string, AddressHolder>;
  source: AnnouncedSource;
}

interface RecordFile {
  /** 1: `addresses` only (no released addresses kept). */
  version: 2;
  addresses: Record<string, string>;
  released: Record<string, AddressHolder>;
}

/** What `stateDir` announced; throws with the file named when the record is unreadable or malformed. */
export function readAnnouncedAddresses(stateDir: string, config: Pick<Config, 'site' | 'gateway'>): AnnouncedAddresses {
  const path = join(stateDir, ADDRESS_RECORD_FILE);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`${path}: ${(err as Error).message}`);
    if (existsSync(join(stateDir, OUTBOX_FILE))) return { addresses: legacySubDeviceAddresses(config.site, config.gateway.cloud), released: new Map(), source: 'previous-version' };
    return { addresses: new Map(), released: new Map(), source: 'none' };
  }
  return { ...parseRecord(text, path), source: 'record' };
}

function parseRecord(text: string, path: string): Pick<AnnouncedAddresses, 'addresses' | 'released'> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new Error(`${path}: not JSON (${(err as Error).message}); restore it or remove it to start from the addresses in the site file`);
  }
  const addresses = (body as Partial<RecordFile> | null)?.addresses;
  if (typeof addresses !== 'object' || addresses === null || Array.isArray(addresses)) throw new Error(`${path}: no "addresses" object`);
  const map = new Map<string, string>();
  for (const [device, address] of Object.entries(addresses)) {
    if (typeof address !== 'string' || address.length === 0) throw new Error(`${path}: the address of "${device}" is not a non-empty string`);
    map.set(device, address);
  }
  return { addresses: map, released: parseReleased((body as Partial<RecordFile>).released, path) };
}

function parseReleased(released: unknown, path: string): Map<string, AddressHolder> {
  const map = new Map<string, AddressHolder>();
  if (released === undefined) return map;
  if (typeof released !== 'object' || released === null || Array.isArray(released)) throw new Error(`${path}: "released" is not an object`);
  for (const [address, holder] of Object.entries(released as Record<string, unknown>)) {
    const { device, lastUsedAt } = (holder ?? {}) as Partial<AddressHolder>;
    if (typeof device !== 'string' || device.length === 0) throw new Error(`${path}: the released address "${address}" names no device`);
    map.set(address, { device, ...(typeof lastUsedAt === 'string' ? { lastUsedAt } : {}) });
  }
  return map;
}

/** `released` after `now` replaced `before`: addresses left behind join it, addresses taken again leave it. */
export function releasedAfter(before: ReadonlyMap<string, string>, now: ReadonlyMap<string, string>, released: ReadonlyMap<string, AddressHolder>, at: string): Map<string, AddressHolder> {
  const inUse = new Set(now.values());
  const next = new Map([...released].filter(([address]) => !inUse.has(address)));
  for (const [device, address] of before) if (!inUse.has(address)) next.set(address, { device, lastUsedAt: at });
  return next;
}

function sorted<T>(entries: Iterable<[string, T]>): Record<string, T> {
  return Object.fromEntries([...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Records `config`'s addresses and the released ones (atomically); returns the devices whose address is new or changed. */
export function writeAddressRecord(stateDir: string, config: Pick<Config, 'site' | 'gateway'>, before: ReadonlyMap<string, string>, released: ReadonlyMap<string, AddressHolder> = new Map()): Array<{ device: string; address: string; was?: string }> {
  const now = subDeviceAddressesOf(config);
  const path = join(stateDir, ADDRESS_RECORD_FILE);
  const body: RecordFile = { version: 2, addresses: sorted(now), released: sorted(released) };
  const temporary = `${path}.tmp`;
  // Synced before the rename: after a power cut the record is the old one or the new one, never empty.
  const fd = openSync(temporary, 'w', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(body, null, 1)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
  const changes: Array<{ device: string; address: string; was?: string }> = [];
  for (const [device, address] of now) {
    const was = before.get(device);
    if (was !== address) changes.push({ device, address, ...(was === undefined ? {} : { was }) });
  }
  return changes;
}

/**
 * `config` keeping the addresses its state directory announced (run, validate), refused when a
 * device would take another's address unasked; the record unreadable is an issue.
 */
export function pinFromStateDir(config: Config): PinnedAddresses & Pick<AddressReuse, 'reassigned'> & { announced: AnnouncedAddresses | undefined } {
  let announced: AnnouncedAddresses;
  try {
    announced = readAnnouncedAddresses(config.gateway.stateDir, config);
  } catch (err) {
    const issues: ConfigIssue[] = [{ path: 'gateway.stateDir', message: `sub-device address record unreadable: ${(err as Error).message}` }];
    return { config: undefined, issues, changed: [], reassigned: [], announced: undefined };
  }
  const pinned = pinSubDeviceAddresses(config, announced.addresses);
  if (!pinned.config) return { ...pinned, reassigned: [], announced };
  const reuse = checkAddressReuse(pinned.config, addressHolders(announced.addresses, announced.released));
  if (reuse.issues.length > 0) return { config: undefined, issues: reuse.issues, changed: pinned.changed, reassigned: reuse.reassigned, announced };
  return { ...pinned, reassigned: reuse.reassigned, announced };
}

function startingRecord(stateDir: string, config: Config): AnnouncedAddresses | undefined {
  try {
    return readAnnouncedAddresses(stateDir, config);
  } catch {
    return undefined; // `run` refused an unreadable record before; a record gone bad since is written anew.
  }
}

/** How often a record that could not be written (read-only or full state directory) is tried again. */
const RETRY_MS = 5_000;

/**
 * Keeps the record in step with the running config: written at start and after each applied
 * reload. A failed write is logged once and tried again until it succeeds: a restart without the
 * record on a directory with an outbox would take the previous version's addresses.
 */
export class AddressRecord {
  /** Device -> address of the running config, and the addresses no device uses now: what the record holds (or will, once written). */
  private announced: ReadonlyMap<string, string>;
  private released: ReadonlyMap<string, AddressHolder>;
  private written: ReadonlyMap<string, string>;
  private current: Config;
  private failing = false;
  private cancelRetry: (() => void) | undefined;

  constructor(private readonly stateDir: string, initial: Config, private readonly log: Logger, private readonly time: TimeWithWall = systemTime) {
    // What the directory held at start (`run` checked it): its addresses no device uses now stay released.
    const before = startingRecord(stateDir, initial);
    this.announced = before?.addresses ?? new Map();
    this.released = before?.released ?? new Map();
    // `run` logged the start's addresses already: the record's changes are logged from the next reload on.
    this.written = subDeviceAddressesOf(initial);
    this.current = initial;
    this.take(initial);
    this.write();
  }

  /** Address -> the device announced under it now or last (a reload is checked against it). */
  holders(): Map<string, AddressHolder> {
    return addressHolders(this.announced, this.released);
  }

  update(next: Config): void {
    this.current = next;
    this.take(next);
    this.write();
  }

  stop(): void {
    this.cancelRetry?.();
    this.cancelRetry = undefined;
  }

  /** `config` runs now: its addresses announced, the ones it left released; a re-assignment logged once, here. */
  private take(config: Config): void {
    const now = subDeviceAddressesOf(config);
    for (const r of checkAddressReuse(config, this.holders()).reassigned) this.log.warn(r, 'sub-device address re-assigned to another device');
    this.released = releasedAfter(this.announced, now, this.released, new Date(this.time.wallNow()).toISOString());
    this.announced = now;
  }

  private write(): void {
    this.stop();
    try {
      const changes = writeAddressRecord(this.stateDir, this.current, this.written, this.released);
      this.written = this.announced;
      if (changes.length > 0) this.log.info({ count: changes.length, changes: changes.slice(0, 20) }, 'sub-device addresses recorded');
      if (this.failing) this.log.info({ file: join(this.stateDir, ADDRESS_RECORD_FILE) }, 'sub-device address record written again');
      this.failing = false;
    } catch (err) {
      // Running on is safe (the addresses are in memory); only a restart without the record would not know them.
      if (!this.failing) this.log.error({ err, file: join(this.stateDir, ADDRESS_RECORD_FILE) }, 'sub-device address record not written');
      this.failing = true;
      this.cancelRetry = this.time.setTimer(() => this.write(), RETRY_MS, { unref: true });
    }
  }
}
