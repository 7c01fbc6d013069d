// Issue 28's late paths for the ways in that came after it: a share client's forwarded read
// (answered to a Modbus TCP client, and feeding the share's read cache), the commissioning page's
// read form and a profile's identification read at a device's first cycle. In each, a read of
// the same unit, function and length (Y) timed out just before and its reply arrives late, while
// the path's own read (X) is on the line. The path must answer with X's values (never Y's), the
// cache must hold X's, and the late frame is counted once in `lateReplies`.
import { afterEach, describe, expect, it } from 'vitest';
import { validateSite } from '../../../src/core/config/site.js';
import type { DeviceIdentification, SiteConfig } from '../../../src/core/config/site-types.js';
import { systemClock, systemTime } from '../../../src/core/time.js';
import { IdentityCheck } from '../../../src/device/identity-check.js';
import { Poller, type Sample } from '../../../src/device/poller.js';
import { compileDevice } from '../../../src/core/config/compile.js';
import { ModbusTimeoutError } from '../../../src/field/modbus/errors.js';
import { silentLogger } from '../../../src/ops/log.js';
import { Shares } from '../../../src/share/shares.js';
import type { GatewayStatus } from '../../../src/ops/status.js';
import { WebCommands } from '../../../src/ops/web/web-commands.js';
import { deviceConfig, pointConfig } from '../../helpers/device-configs.js';
import { truthOf } from '../../helpers/trap-peer.js';
import { UNIT, X, Y, lateScript, settle, startLateRig, truthWords } from '../../helpers/late-path-rig.js';
import { freePort } from '../../helpers/mosquitto.js';
import { mbap, rawClient } from '../../helpers/share-clients.js';
import { waitFor } from '../../helpers/wait.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const TIMEOUT_MS = 300;
/** Y's reply: 150 ms after its timeout. */
const LATE_MS = 450;
/** X's pieces are answered this late, so Y's late frame arrives while X is on the line. */
const X_AFTER_MS = 200;

/** An RTU bus with a share on a free port (cache on), validated as a site file is. */
function shareSite(path: string, port: number): SiteConfig {
  const result = validateSite({
    buses: [{
      name: 'line', kind: 'rtu', path, baudRate: 19200, timeoutMs: TIMEOUT_MS, interFrameDelayMs: 3,
      cooldown: { afterTimeouts: 5, initialMs: 1000, maxMs: 1000 }, timeoutRepeats: 0, share: { port, cacheMs: 60_000 },
    }],
    devices: [{ name: 'meter', bus: 'line', unitId: UNIT, points: [{ id: 'v', table: 'holding', address: 0, type: 'uint16' }] }],
  });
  if (!result.site) throw new Error(JSON.stringify(result.issues));
  return result.site;
}

/** One FC3 read of 2 registers at `address` by a Modbus TCP client of the share: the registers, or the exception code. */
async function shareRead(port: number, transactionId: number, address: number): Promise<number[] | { exception: number }> {
  const client = await rawClient(port);
  try {
    client.socket.write(mbap(transactionId, UNIT, [3, address >> 8, address & 0xff, 0, 2]));
    const reply = await waitFor(() => {
      const bytes = client.received();
      return bytes.length >= 9 && (bytes[7]! & 0x80 ? bytes : bytes.length >= 13 ? bytes : undefined);
    }, { what: 'the share\'s answer', timeoutMs: 10_000 });
    expect(reply.readUInt16BE(0)).toBe(transactionId);
    if (reply[7]! & 0x80) return { exception: reply[8]! };
    return [reply.readUInt16BE(9), reply.readUInt16BE(11)];
  } finally {
    client.socket.destroy();
  }
}

describe('a share client\'s forwarded read', () => {
  it.each([
    ['right after a timed-out poll of the same shape', false],
    ['repeated after "busy" while a cloud read of the same shape times out', true],
  ] as const)('%s: the client and the cache get X\'s values', async (_name, busyFirst) => {
    const port = await freePort();
    let site: SiteConfig | undefined;
    const { bus, peer } = await startLateRig(cleanups, TIMEOUT_MS, { answer: lateScript(LATE_MS, { busyFirst, otherAfterMs: X_AFTER_MS }) }, (path) => {
      site = shareSite(path, port);
      return site.buses[0]!;
    });
    const shares = new Shares(site!, { buses: new Map([['line', bus]]), clock: systemClock, log: silentLogger(), readBack: () => undefined, confirmed: () => undefined });
    cleanups.push(() => shares.stop());
    await shares.start();

    let forwarded: Promise<number[] | { exception: number }>;
    if (busyFirst) {
      // X is answered "busy"; during its pause a cloud read of Y goes, times out, and answers during X's repeat.
      forwarded = shareRead(port, 1, X);
      await waitFor(() => peer.requests.some((r) => r.address === X), { what: 'the share\'s read on the line' });
      expect(await settle(bus.read(UNIT, 'holding', Y, 2, { priority: 'high' }))).toBeInstanceOf(ModbusTimeoutError);
    } else {
      const poll = settle(bus.read(UNIT, 'holding', Y, 2));
      forwarded = shareRead(port, 1, X);
      expect(await poll).toBeInstanceOf(ModbusTimeoutError);
    }
    expect(await forwarded).toEqual(Array.from(truthWords(X, 2)));
    await waitFor(() => bus.stats().lateReplies >= 1, { what: 'the late reply counted' });
    expect(bus.stats().lateReplies).toBe(1);
    const late = peer.requests.find((r) => r.address === Y)!.at + LATE_MS;
    const xPieces = peer.requests.filter((r) => r.address === X || r.address === X + 1);
    // Y's late frame came while X's read was on the line (its last piece was answered after it).
    expect(xPieces[xPieces.length - 1]!.at + X_AFTER_MS).toBeGreaterThan(late);
    // The cache holds what X's read brought back: the next client read is answered from it, with X's values.
    const fromCacheBefore = shares.status()[0]!.fromCache;
    expect(await shareRead(port, 2, X)).toEqual(Array.from(truthWords(X, 2)));
    expect(shares.status()[0]!.fromCache).toBe(fromCacheBefore + 1);
    if (busyFirst) expect(bus.stats().busyRetries).toBe(1);
  }, 30_000);
});

describe('the commissioning page\'s read form', () => {
  it('right after a timed-out poll of the same shape: the form shows X\'s registers', async () => {
    const { bus } = await startLateRig(cleanups, TIMEOUT_MS, { answer: lateScript(LATE_MS, { otherAfterMs: X_AFTER_MS }) });
    const limits = { readMaxRegisters: 125, readMaxBits: 2000, readsPerMinute: 60, logLevelMaxMs: 60_000, maxPending: 4 };
    const parts = { buses: new Map([['line', { kind: 'rtu' as const, read: bus.read.bind(bus) }]]), devices: [], pollDevice: () => Promise.reject(new Error('no poller')) };
    const level = { get: () => 'info', set: () => undefined };
    const page = new WebCommands(parts, new Map(), limits, () => ({}) as GatewayStatus, level, systemTime, silentLogger(), 10);
    const poll = settle(bus.read(UNIT, 'holding', Y, 2));
    const form = page.read({ bus: 'line', unit: UNIT, table: 'holding', address: X, count: 2 });
    expect(await poll).toBeInstanceOf(ModbusTimeoutError);
    expect(await form).toMatchObject({ ok: true, result: { raw: Array.from(truthWords(X, 2)) } });
    // With a type, the decoded value is X's too.
    expect(await page.read({ bus: 'line', unit: UNIT, table: 'holding', address: X, count: 1, type: 'uint32' }))
      .toMatchObject({ ok: true, result: { values: [{ address: X, value: truthWords(X, 2)[0]! * 65536 + truthWords(X, 2)[1]! }] } });
    await waitFor(() => bus.stats().lateReplies >= 1, { what: 'the late reply counted' });
    expect(bus.stats().lateReplies).toBe(1);
  }, 30_000);
});

describe('a profile\'s identification read at the first cycle', () => {
  it('right after a timed-out read of the same shape: judged on X\'s registers, not the late reply\'s', async () => {
    const code = (address: number) => truthWords(address, 2)[0]! * 65536 + truthWords(address, 2)[1]!;
    const register = (values: number[]) => ({ point: pointConfig({ id: 'identification_0', address: X, type: 'uint32', length: 2 }), values, label: 'model code' });
    // The late reply's values (Y's) would pass for the other model's code.
    const identification: DeviceIdentification = { profiles: ['meter-x'], registers: [register([code(X)])], others: [{ name: 'meter-y', registers: [register([code(Y)])] }] };
    // On a busy machine X's own read can miss its timeout too; then nothing was judged (status stays
    // unset) and the case is tried again on a fresh line. Whatever was judged must be X's model.
    for (let attempt = 1; ; attempt += 1) {
      const { bus } = await startLateRig(cleanups, TIMEOUT_MS, { answer: lateScript(LATE_MS, { otherAfterMs: X_AFTER_MS }) });
      const check = new IdentityCheck(identification, silentLogger());
      const cloudRead = settle(bus.read(UNIT, 'holding', Y, 2, { priority: 'high' }));
      const verdict = check.beforeCycle(bus, UNIT);
      expect(await cloudRead).toBeInstanceOf(ModbusTimeoutError);
      expect(await verdict).toBeUndefined();
      await waitFor(() => bus.stats().lateReplies >= 1, { what: 'the late reply counted' });
      expect(bus.stats().lateReplies).toBe(1);
      if (check.status() === undefined && attempt < 3) continue;
      expect(check.status()).toEqual({ state: 'identified', profiles: ['meter-x'] });
      return;
    }
  }, 60_000);
});

describe('a profile\'s identification read the late-reply guard keeps from the device', () => {
  it('is no answer from the device: asked again, and another model is not polled once it is asked', async () => {
    const MODEL_AT = 256;
    // Y (one register, like the model code) gets no answer: its length is guarded for 10 timeouts.
    const { bus, peer } = await startLateRig(cleanups, TIMEOUT_MS, { answer: (r) => (r.address === Y ? 'silent' : { afterMs: 0 }) });
    expect(await settle(bus.read(UNIT, 'holding', Y, 1))).toBeInstanceOf(ModbusTimeoutError);
    const register = (values: number[]) => ({ point: pointConfig({ id: 'identification_0', address: MODEL_AT }), values, label: 'model code' });
    // The device holds another model's code.
    const identification: DeviceIdentification = { profiles: ['meter-x'], registers: [register([7])], others: [{ name: 'meter-y', registers: [register([truthOf(UNIT, MODEL_AT)])] }] };
    const device = deviceConfig({ name: 'meter', unitId: UNIT, pollIntervalMs: 500, identification, points: [pointConfig({ id: 'v', address: X, type: 'uint32' })] });
    const samples: Sample[] = [];
    const poller = new Poller({ bus, devices: [compileDevice(device)], sink: { onSample: (s) => samples.push(s), onDeviceState: () => undefined }, logger: silentLogger() });
    cleanups.push(() => poller.stop());
    poller.start();
    const stats = () => poller.stats()[0]!;
    await waitFor(() => stats().identification?.state === 'other-model', { what: 'the model read once the guard let it go', timeoutMs: 20_000 });
    expect(stats().identification).toMatchObject({ identifiedAs: ['meter-y'] });
    // Asked whole once the guard let it go; until then every cycle asked again (refused by the bus, never "unverified").
    expect(peer.requests.filter((r) => r.address === MODEL_AT)).toHaveLength(1);
    expect(bus.stats().lateGuardRejects).toBeGreaterThanOrEqual(1);
    const pollsOfX = samples.length;
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(samples.length).toBe(pollsOfX); // another model: not polled
  }, 30_000);
});
