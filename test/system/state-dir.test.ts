// The state directory between and beside daemons: a second `fieldgate run` on it exits at once
// (73, naming the holder's PID) while the first keeps its link, also after fieldgate.lock was
// deleted under the first (the lock is on the directory); a kill -9 leaves no stale lock; a
// command that does not touch the state works beside the daemon; an outbox file corrupted between
// runs is moved aside (kept, one log line) and the gateway polls and delivers again; the outbox
// file deleted while the gateway runs is replaced with every row, and nothing is lost.
import { closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { freePort } from '../helpers/mosquitto.js';
import type { GatewayStatus } from '../../src/ops/status.js';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EXIT_STATE_LOCKED, LOCK_FILE } from '../../src/ops/state-lock.js';
import { runCli } from '../helpers/run-cli.js';
import { DeliveryRig, settle } from './delivery-rig.js';
import { GatewayLog, getJson } from './storage-rig.js';

describe('one daemon per state directory', () => {
  let rig: DeliveryRig | undefined;
  const logs: GatewayLog[] = [];
  afterEach(async () => {
    await rig?.close();
    for (const log of logs.splice(0)) log.close();
    rig = undefined;
  });

  function logFor(r: DeliveryRig, name: string): GatewayLog {
    const log = new GatewayLog(r.dir, name);
    logs.push(log);
    return log;
  }

  it('a second run exits 73 at once naming the holder; the first keeps its link; kill -9 leaves no stale lock', async () => {
    rig = await DeliveryRig.start({ logLevel: 'info' });
    const r = rig;
    const firstLog = logFor(r, 'first');
    const first = r.startGateway(firstLog);
    await settle(() => r.received.length >= 10, 30_000);

    const secondLog = logFor(r, 'second');
    const second = r.startGateway(secondLog);
    const secondExit = await second.exited;
    expect(secondExit).toBe(EXIT_STATE_LOCKED);
    expect(secondLog.stderr()).toContain(`in use by fieldgate PID ${first.child.pid}`);
    expect(secondLog.messages('state directory in use by another fieldgate')).toEqual([
      expect.objectContaining({ holderPid: first.child.pid, lockFile: expect.stringMatching(/fieldgate\.lock$/) }),
    ]);
    // It never opened the outbox or a link: nothing else in its log.
    expect(secondLog.lines().map((l) => l.msg)).toEqual(['state directory in use by another fieldgate']);

    // A command that does not touch the state works beside the daemon.
    const validate = await runCli(['validate', r.site]);
    expect(validate.code).toBe(0);

    // The first daemon was not disturbed: still delivering, its link never dropped.
    const before = r.received.length;
    await settle(() => r.received.length >= before + 20, 30_000);
    expect(firstLog.messages('cloud link down')).toEqual([]);

    first.child.kill('SIGKILL');
    await first.exited;
    const thirdLog = logFor(r, 'third');
    const third = r.startGateway(thirdLog);
    const afterKill = r.received.length;
    await settle(() => r.received.length >= afterKill + 10, 30_000);
    expect(r.received.length).toBeGreaterThanOrEqual(afterKill + 10);
    third.child.kill('SIGTERM');
    expect(await third.exited).toBe(0);
    console.log(`two daemons: second exited ${secondExit} naming PID ${first.child.pid}; first delivered ${before} then more, 0 link drops; after kill -9 a new daemon took the lock and delivered`);
  }, 120_000);

  it('fieldgate.lock deleted while a daemon runs: a second run is still refused (73), the first keeps its link and writes the file again', async () => {
    rig = await DeliveryRig.start({ logLevel: 'info' });
    const r = rig;
    const firstLog = logFor(r, 'first');
    const first = r.startGateway(firstLog);
    await settle(() => r.received.length >= 10, 30_000);
    const lockFile = join(r.dir, 'state', LOCK_FILE);
    rmSync(lockFile);

    const secondLog = logFor(r, 'second');
    const second = r.startGateway(secondLog);
    const secondExit = await second.exited;
    expect(secondExit).toBe(EXIT_STATE_LOCKED);
    expect(secondLog.lines().map((l) => l.msg)).toEqual(['state directory in use by another fieldgate']);
    // The holder writes its PID again at its next check (every storageRetryMs).
    await settle(() => existsSync(lockFile) && readFileSync(lockFile, 'utf8') === `${first.child.pid}\n`, 10_000);
    expect(readFileSync(lockFile, 'utf8')).toBe(`${first.child.pid}\n`);
    const third = r.startGateway(logFor(r, 'third'));
    expect(await third.exited).toBe(EXIT_STATE_LOCKED);

    const before = r.received.length;
    await settle(() => r.received.length >= before + 20, 30_000);
    expect(firstLog.messages('cloud link down')).toEqual([]);
    const exit = await r.stopAndCount(first);
    // By poll time: after a stall of this process (the simulator's), two polls can read one counter value.
    const duplicates = r.receivedTs.length - new Set(r.receivedTs).size;
    console.log(`lock file deleted: second exited ${secondExit}, third (after the PID was rewritten) ${third.child.exitCode}; first: 0 link drops, ${duplicates} duplicates, exit ${exit.exitCode}`);
    expect(duplicates).toBe(0);
    expect(exit.exitCode).toBe(0);
  }, 120_000);

  it('an outbox file corrupted between runs is moved aside, named in one line, and the gateway runs again', async () => {
    rig = await DeliveryRig.start({ logLevel: 'info' });
    const r = rig;
    const firstLog = logFor(r, 'first');
    const first = r.startGateway(firstLog);
    await settle(() => r.received.length >= 10, 30_000);
    r.pipe.cutOff(true);
    await settle(() => r.outbox.pendingRows() >= 20, 30_000);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    r.outbox.stop();

    const stateDir = join(r.dir, 'state');
    const file = join(stateDir, 'outbox.sqlite');
    // A damaged header and first page; the WAL and shared-memory files gone with it.
    for (const suffix of ['-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.alloc(1024, 0xee), 0, 1024, 0);
    closeSync(fd);

    r.pipe.cutOff(false);
    const secondLog = logFor(r, 'second');
    const second = r.startGateway(secondLog);
    const before = r.received.length;
    await settle(() => r.received.length >= before + 20, 30_000);
    expect(r.received.length).toBeGreaterThanOrEqual(before + 20);
    const moved = secondLog.messages('outbox file corrupt: moved aside, a fresh one is used');
    expect(moved).toHaveLength(1);
    expect(String(moved[0].movedTo)).toMatch(/outbox\.sqlite\.corrupt-/);
    expect(existsSync(String(moved[0].movedTo))).toBe(true);
    expect(readdirSync(stateDir).filter((f) => f.includes('.corrupt-') && !f.endsWith('-wal') && !f.endsWith('-shm'))).toHaveLength(1);
    expect(secondLog.messages('gateway failed to start')).toEqual([]);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    console.log(`corrupt file between runs: moved to ${String(moved[0].movedTo)}, ${r.received.length - before} reports delivered after the restart, exit 0`);
  }, 120_000);

  it('the outbox file deleted while running (rm outbox.sqlite*): a fresh file with every row, two log lines, nothing lost', async () => {
    const port = await freePort();
    rig = await DeliveryRig.start({ logLevel: 'info', healthPort: port });
    const r = rig;
    const log = logFor(r, 'gateway');
    const gateway = r.startGateway(log);
    await settle(() => r.received.length >= 10, 30_000);
    r.pipe.cutOff(true);
    await settle(() => r.outbox.pendingRows() >= 20, 30_000);
    r.outbox.stop();
    const file = join(r.dir, 'state', 'outbox.sqlite');
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
    // The supervision tick (every 5 s) notices and moves the rows to a fresh file.
    await settle(() => log.messages('outbox storage back').length > 0, 30_000);
    expect(existsSync(file)).toBe(true);
    r.pipe.cutOff(false);
    const status = async () => (await getJson<GatewayStatus>(port, '/status')).body;
    await r.sim.close();
    let last = await status();
    for (let i = 0; i < 60 && ((last.outbox?.depth ?? 1) > 0 || last.devices[0]?.online); i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      last = await status();
    }
    const cycles = last.devices[0]?.cyclesWithValues ?? -1;
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toBe(0);
    const delivered = new Set(r.receivedTs).size;
    const dropped = last.outbox?.dropped ?? -1;
    console.log(`file deleted while running: ${cycles} reports polled, ${delivered} delivered, ${dropped} dropped, ${cycles - delivered - dropped} unexplained; `
      + `log: ${log.messages('outbox storage failing').length} failing / ${log.messages('outbox storage back').length} back`);
    expect(last.outbox?.depth).toBe(0);
    expect(cycles - delivered - dropped).toBe(0);
    expect(log.messages('outbox storage failing')).toEqual([expect.objectContaining({ cause: expect.stringMatching(/deleted or replaced while open/) })]);
    expect(log.messages('outbox storage back')).toHaveLength(1);
  }, 120_000);
});
