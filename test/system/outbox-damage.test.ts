// A damaged outbox file under a real gateway: reports piled up on disk during a broker outage,
// the gateway stopped, then the file damaged for real (a page zeroed, a payload byte flipped that
// SQLite's checks do not see), and the gateway started again with the broker back. Every report
// is accounted for: polled = delivered + counted as dropped (in /status, kept across the restart),
// the damaged payload is never published, and the lost ones are the zeroed page's. On an ext4
// loop image where the machine allows mounting, else on a real file in the temp directory.
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/mosquitto.js';
import { checkpoint, integrityOf, zeroPageHolding } from '../helpers/outbox-file.js';
import { DeliveryRig, outOfOrder, settle, type GatewayProcess } from './delivery-rig.js';
import { canMount, GatewayLog, mountExt4, silenceDevice, statusAt as status, statusWhen, type SmallFs } from './storage-rig.js';

const mountable = canMount();

/** Flips one byte inside the payload of the row reporting counter value `value` (its first copy in the file). */
function flipPayloadByte(path: string, value: number): void {
  const bytes = readFileSync(path);
  const at = bytes.indexOf(`"seq":${value},`);
  if (at < 0) throw new Error(`counter value ${value} not found in ${path}`);
  const fd = openSync(path, 'r+');
  // The digit after `"seq":`: still valid JSON, a wrong value, the worst kind of damage.
  writeSync(fd, Buffer.from([bytes[at + 6] === 0x39 ? 0x38 : bytes[at + 6] + 1]), 0, 1, at + 6);
  closeSync(fd);
}

describe('a damaged outbox file at start, under a real gateway', () => {
  let rig: DeliveryRig | undefined;
  let fs: SmallFs | undefined;
  let log: GatewayLog | undefined;
  let tempDir: string | undefined;
  afterEach(async () => {
    await rig?.close();
    log?.close();
    fs?.dispose();
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
    rig = fs = log = tempDir = undefined;
  });

  it.each(['memory-first', 'write-ahead'] as const)('%s: a zeroed page and a flipped payload byte: readable reports delivered in order, the rest counted, delivered + counted = polled', async (mode) => {
    if (mountable) fs = mountExt4(64);
    else tempDir = mkdtempSync(join(tmpdir(), 'fg-damage-'));
    const stateDir = join(fs?.path ?? tempDir ?? '', 'state');
    const path = join(stateDir, 'outbox.sqlite');
    const port = await freePort();
    rig = await DeliveryRig.start({ stateDir, healthPort: port, logLevel: 'info', mode });
    const r = rig;
    log = new GatewayLog(r.dir, 'gateway');
    let gateway: GatewayProcess = r.startGateway(log);
    await settle(() => r.received.length >= 20, 30_000);
    r.pipe.cutOff(true);
    await settle(() => r.outbox.pendingRows() >= 300, 90_000);
    const polled = await silenceDevice(r, port);
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toBe(0);
    r.outbox.sample();
    r.outbox.stop();
    const onDisk = r.outbox.pending().sort((a, b) => a - b);
    expect(onDisk.length).toBeGreaterThanOrEqual(300);

    checkpoint(path);
    const zeroedValue = onDisk[Math.floor(onDisk.length / 2)];
    zeroPageHolding(path, `"seq":${zeroedValue},`);
    const flippedValue = onDisk[Math.floor(onDisk.length / 4)];
    flipPayloadByte(path, flippedValue);

    r.pipe.cutOff(false);
    gateway = r.startGateway(log);
    const drained = await statusWhen(port, (s) => s.outbox?.depth === 0, 90_000);
    expect(drained?.outbox?.depth).toBe(0);
    const counted = drained?.outbox?.dropped ?? -1;
    // What the broker acknowledged last may still be on its way to the subscriber.
    // Reports counted by poll time: after a stall of this process (the simulator's), two polls can read one counter value.
    const delivered = () => new Set(r.receivedTs).size;
    await settle(() => delivered() + counted >= polled, 15_000);
    const deliveredValues = new Set(r.received);
    // Every report polled before the stop was delivered then or is on disk: the missing are among the latter.
    const missing = onDisk.filter((v) => !deliveredValues.has(v));
    console.log(`outbox damage (${mode}, ${mountable ? 'ext4 loop image' : 'temp dir'}): ${polled} polled, ${delivered()} delivered, ${counted} counted `
      + `(${onDisk.length} on disk at the stop), ${r.receivedTs.length - delivered()} duplicates; missing ${missing.join(',')}`);
    expect(log.messages('outbox file corrupt: moved aside, a fresh one is used')).toHaveLength(1);
    expect(log.messages('outbox record failed its checksum')).toEqual([expect.objectContaining({ reason: 'checksum', records: 1 })]);
    expect(log.messages('outbox reports lost')).toHaveLength(1);
    expect(counted).toBeGreaterThan(1);
    expect(counted).toBeLessThan(40);
    // The flipped record is never published under any value: the value it was changed to is not a later poll's.
    expect(missing).toContain(flippedValue);
    expect(missing).toContain(zeroedValue);
    expect(delivered() + counted).toBe(polled);
    expect(missing).toHaveLength(counted);
    expect(outOfOrder(r.received)).toEqual([]);
    // The counters survive a restart.
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toBe(0);
    gateway = r.startGateway(log);
    const again = await statusWhen(port, (s) => s.outbox !== undefined, 30_000);
    expect(again?.outbox?.dropped).toBe(counted);
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toBe(0);
    expect(integrityOf(path)).toEqual(['ok']);
    expect((await status(port))).toBeUndefined();
  }, 300_000);
});
