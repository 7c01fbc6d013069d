// The sub-device addresses this state directory announced, by device name, in
// `<stateDir>/sub-device-addresses.json`: read at start (and by `validate`) so every device keeps
// its address across restarts and upgrades (core/config/sub-device-addresses.ts), written at start
// and after each applied reload. A state directory a version before the record ran on (an outbox
// but no record) announced the addresses of that version's rule.
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../core/config/config.js';
import { legacySubDeviceAddresses } from '../core/config/gateway-mode.js';
import { pinSubDeviceAddresses, subDeviceAddressesOf, type PinnedAddresses } from '../core/config/sub-device-addresses.js';
import type { ConfigIssue } from '../core/config/site-types.js';
import type { Logger } from '../core/logger.js';
import { systemTime, type Time } from '../core/time.js';

export const ADDRESS_RECORD_FILE = 'sub-device-addresses.json';
/** Written by every version, so its presence shows a fieldgate ran on the directory before. */
const OUTBOX_FILE = 'outbox.sqlite';

export type AnnouncedSource = 'record' | 'previous-version' | 'none';

export interface AnnouncedAddresses {
  addresses: Map<string, string>;
  source: AnnouncedSource;
}

interface RecordFile {
  version: 1;
  addresses: Record<string, string>;
}

/** What `stateDir` announced; throws with the file named when the record is unreadable or malformed. */
export function readAnnouncedAddresses(stateDir: string, config: Pick<Config, 'site' | 'gateway'>): AnnouncedAddresses {
  const path = join(stateDir, ADDRESS_RECORD_FILE);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`${path}: ${(err as Error).message}`);
    if (existsSync(join(stateDir, OUTBOX_FILE))) return { addresses: legacySubDeviceAddresses(config.site, config.gateway.cloud), source: 'previous-version' };
    return { addresses: new Map(), source: 'none' };
  }
  return { addresses: parseRecord(text, path), source: 'record' };
}

function parseRecord(text: string, path: string): Map<string, string> {
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
  return map;
}

/** Records `config`'s addresses (atomically); returns the devices whose address is new or changed. */
export function writeAddressRecord(stateDir: string, config: Pick<Config, 'site' | 'gateway'>, before: ReadonlyMap<string, string>): Array<{ device: string; address: string; was?: string }> {
  const now = subDeviceAddressesOf(config);
  const path = join(stateDir, ADDRESS_RECORD_FILE);
  const body: RecordFile = { version: 1, addresses: Object.fromEntries([...now].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) };
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

/** `config` keeping the addresses its state directory announced (run, validate); the record unreadable is an issue. */
export function pinFromStateDir(config: Config): PinnedAddresses & { announced: AnnouncedAddresses | undefined } {
  let announced: AnnouncedAddresses;
  try {
    announced = readAnnouncedAddresses(config.gateway.stateDir, config);
  } catch (err) {
    const issues: ConfigIssue[] = [{ path: 'gateway.stateDir', message: `sub-device address record unreadable: ${(err as Error).message}` }];
    return { config: undefined, issues, changed: [], announced: undefined };
  }
  return { ...pinSubDeviceAddresses(config, announced.addresses), announced };
}

/** How often a record that could not be written (read-only or full state directory) is tried again. */
const RETRY_MS = 5_000;

/**
 * Keeps the record in step with the running config: written at start and after each applied
 * reload. A failed write is logged once and tried again until it succeeds: a restart without the
 * record on a directory with an outbox would take the previous version's addresses.
 */
export class AddressRecord {
  private last: ReadonlyMap<string, string>;
  private current: Config;
  private failing = false;
  private cancelRetry: (() => void) | undefined;

  constructor(private readonly stateDir: string, initial: Config, private readonly log: Logger, private readonly time: Time = systemTime) {
    this.last = subDeviceAddressesOf(initial);
    this.current = initial;
    this.write();
  }

  update(next: Config): void {
    this.current = next;
    this.write();
  }

  stop(): void {
    this.cancelRetry?.();
    this.cancelRetry = undefined;
  }

  private write(): void {
    this.stop();
    const config = this.current;
    try {
      const changes = writeAddressRecord(this.stateDir, config, this.last);
      this.last = subDeviceAddressesOf(config);
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
