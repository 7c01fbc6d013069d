// The address record in the state directory: what a fresh directory, one a version before the
// record ran on, and one with a record announce; a damaged record refused with its file named.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Config } from '../../../src/core/config/config.js';
import { formatIssue } from '../../../src/core/config/issues.js';
import { checkConfig } from '../../../src/ops/site-file.js';
import { ADDRESS_RECORD_FILE, AddressRecord, pinFromStateDir, readAnnouncedAddresses } from '../../../src/ops/sub-device-record.js';
import { subDeviceAddressesOf } from '../../../src/core/config/sub-device-addresses.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { ManualClock } from '../../helpers/manual-clock.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Devices m<unit> on bus "a", or on the bus given per device. */
function site(stateDir: string, units: number[], busOf: string[] = []): Config {
  const buses = [...new Set(['a', ...busOf])];
  const raw = {
    gateway: { stateDir, cloud: { mqttUrl: 'mqtt://127.0.0.1:1883', projectKey: 'pk', identity: { accessToken: 'gw' }, mode: 'gateway' } },
    buses: buses.map((name, i) => ({ name, kind: 'tcp', host: '127.0.0.1', port: 5020 + i })),
    devices: units.map((unitId, i) => ({ name: `m${unitId}`, bus: busOf[i] ?? 'a', unitId, points: [{ id: 'v', table: 'input', address: 0 }], cloud: { accessToken: `t${unitId}` } })),
  };
  const checked = checkConfig(raw, {});
  if (!checked.config) throw new Error(checked.issues.map(formatIssue).join('; '));
  return checked.config;
}

function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fg-addr-record-'));
  dirs.push(dir);
  return dir;
}

describe('sub-device address record', () => {
  it('a fresh state directory announced nothing: every device takes <bus>/<unit>', () => {
    const dir = stateDir();
    const pinned = pinFromStateDir(site(dir, [1, 2]));
    expect(pinned.announced?.source).toBe('none');
    expect([...subDeviceAddressesOf(pinned.config!)]).toEqual([['m1', 'a/1'], ['m2', 'a/2']]);
  });

  it('a state directory with an outbox and no record (an upgrade): the previous rule, kept once a second bus comes', () => {
    const dir = stateDir();
    writeFileSync(join(dir, 'outbox.sqlite'), '');
    const upgraded = pinFromStateDir(site(dir, [1, 2]));
    expect(upgraded.announced?.source).toBe('previous-version');
    expect([...subDeviceAddressesOf(upgraded.config!)]).toEqual([['m1', '1'], ['m2', '2']]);
    const { logger } = captureLogger();
    new AddressRecord(dir, upgraded.config!, logger);
    expect(JSON.parse(readFileSync(join(dir, ADDRESS_RECORD_FILE), 'utf8'))).toEqual({ version: 2, addresses: { m1: '1', m2: '2' }, released: {} });
    const grown = pinFromStateDir(site(dir, [1, 2, 3], ['a', 'a', 'b']));
    expect(grown.announced?.source).toBe('record');
    expect([...subDeviceAddressesOf(grown.config!)]).toEqual([['m1', '1'], ['m2', '2'], ['m3', 'b/3']]);
  });

  it('a reload logs the devices whose address is new, once; the start logs nothing', () => {
    const dir = stateDir();
    const { logger, lines } = captureLogger();
    const record = new AddressRecord(dir, pinFromStateDir(site(dir, [1])).config!, logger);
    record.update(pinFromStateDir(site(dir, [1, 2])).config!);
    record.update(pinFromStateDir(site(dir, [1, 2])).config!);
    expect(lines().filter((l) => l.msg === 'sub-device addresses recorded').map((l) => l.changes)).toEqual([
      [{ device: 'm2', address: 'a/2' }],
    ]);
    expect(JSON.parse(readFileSync(join(dir, ADDRESS_RECORD_FILE), 'utf8')).addresses).toEqual({ m1: 'a/1', m2: 'a/2' });
  });

  it('a record that cannot be written is logged once and written as soon as the directory takes it', () => {
    const parent = stateDir();
    const dir = join(parent, 'state');
    writeFileSync(dir, 'a file where the directory should be');
    const { logger, lines } = captureLogger();
    const clock = new ManualClock();
    const record = new AddressRecord(dir, site(dir, [1]), logger, clock);
    clock.advance(5_000);
    clock.advance(5_000);
    expect(lines().filter((l) => l.msg === 'sub-device address record not written')).toHaveLength(1);
    rmSync(dir);
    mkdirSync(dir);
    clock.advance(5_000);
    expect(JSON.parse(readFileSync(join(dir, ADDRESS_RECORD_FILE), 'utf8')).addresses).toEqual({ m1: 'a/1' });
    expect(lines().filter((l) => l.msg === 'sub-device address record written again')).toHaveLength(1);
    record.stop();
  });

  it.each([
    ['not JSON', '{"addresses":', 'not JSON'],
    ['empty (never written whole)', '', 'not JSON'],
    ['no addresses object', '{"version":1}', 'no "addresses" object'],
    ['an address that is not a string', '{"version":1,"addresses":{"m1":4}}', 'the address of "m1" is not a non-empty string'],
  ])('a record %s is refused with its file named', (_name, text, expected) => {
    const dir = stateDir();
    writeFileSync(join(dir, ADDRESS_RECORD_FILE), text);
    expect(() => readAnnouncedAddresses(dir, site(dir, [1]))).toThrow(expected);
    const pinned = pinFromStateDir(site(dir, [1]));
    expect(pinned.config).toBeUndefined();
    expect(pinned.issues[0]).toMatchObject({ path: 'gateway.stateDir', message: expect.stringContaining(join(dir, ADDRESS_RECORD_FILE)) });
  });
});
