// Small filesystems for the storage fault tests, made for real (root only): a size-limited tmpfs
// (filled to the last byte during an outage, then freed) and an ext4 image on a loop device
// mounted errors=remount-ro (an ext4 error turns it read-only, as an SD card's does). The
// gateway's JSON log goes to a file so the tests count its lines.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { GatewayStatus } from '../../src/ops/status.js';
import { sleep, type DeliveryRig } from './delivery-rig.js';

export interface SmallFs {
  path: string;
  /** The ext4 sysfs name (loopN), for trigger_fs_error. */
  loopName?: string;
  dispose(): void;
}

/** Whether this process may mount (root with CAP_SYS_ADMIN): the tests say so when they skip. */
export function canMount(): boolean {
  if (process.getuid?.() !== 0) return false;
  const probe = mkdtempSync(join(tmpdir(), 'fg-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

export function mountTmpfs(sizeKiB: number): SmallFs {
  const path = mkdtempSync(join(tmpdir(), 'fg-tmpfs-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKiB}k,mode=0700`, 'tmpfs', path]);
  return { path, dispose: () => unmount(path) };
}

export function mountExt4(sizeMiB: number): SmallFs {
  const dir = mkdtempSync(join(tmpdir(), 'fg-ext4-'));
  const image = join(dir, 'fs.img');
  const path = join(dir, 'mnt');
  execFileSync('truncate', ['-s', `${sizeMiB}M`, image]);
  execFileSync('mkfs.ext4', ['-q', '-F', image]);
  execFileSync('mkdir', [path]);
  execFileSync('mount', ['-o', 'loop,errors=remount-ro', image, path]);
  const source = execFileSync('findmnt', ['-n', '-o', 'SOURCE', path], { encoding: 'utf8' }).trim();
  return {
    path, loopName: basename(source),
    dispose: () => {
      unmount(path);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An ext4 error on the filesystem: with errors=remount-ro the kernel makes it read-only at once. */
export function turnReadOnly(fs: SmallFs): void {
  if (!fs.loopName) throw new Error('not an ext4 loop mount');
  execFileSync('sh', ['-c', `echo 1 > /sys/fs/ext4/${fs.loopName}/trigger_fs_error`]);
}

function unmount(path: string): void {
  try {
    execFileSync('umount', ['-l', path], { stdio: 'ignore' });
  } catch {
    // Already gone.
  }
  rmSync(path, { recursive: true, force: true });
}

/** Writes a filler file until the filesystem has no byte left; returns its path. */
export function fillUp(dir: string): string {
  const filler = join(dir, 'filler');
  const fd = openSync(filler, 'w');
  const chunk = Buffer.alloc(64 * 1024, 0x55);
  try {
    for (;;) {
      try {
        writeSync(fd, chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
        // The last partial chunk: down to single bytes.
        for (let size = chunk.length / 2; size >= 1; size = Math.floor(size / 2)) {
          try {
            while (writeSync(fd, chunk, 0, size) > 0) { /* keep filling */ }
          } catch {
            // This size no longer fits; try smaller.
          }
        }
        return filler;
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** The gateway's log: files its stdout (JSON lines) and stderr go to. */
export class GatewayLog {
  readonly out: number;
  readonly err: number;
  private readonly outPath: string;
  private readonly errPath: string;

  constructor(dir: string, name: string) {
    this.outPath = join(dir, `${name}.log`);
    this.errPath = join(dir, `${name}.err`);
    this.out = openSync(this.outPath, 'a');
    this.err = openSync(this.errPath, 'a');
  }

  lines(): Record<string, unknown>[] {
    return readFileSync(this.outPath, 'utf8').split('\n').filter(Boolean).flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  }

  messages(msg: string): Record<string, unknown>[] {
    return this.lines().filter((l) => l.msg === msg);
  }

  stderr(): string {
    return readFileSync(this.errPath, 'utf8');
  }

  close(): void {
    closeSync(this.out);
    closeSync(this.err);
  }
}

export async function getJson<T>(port: number, path: string): Promise<{ status: number; body: T }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: (await res.json()) as T };
}

export async function getText(port: number, path: string): Promise<string> {
  return (await fetch(`http://127.0.0.1:${port}${path}`)).text();
}

export async function status(port: number): Promise<GatewayStatus | undefined> {
  try {
    return (await getJson<GatewayStatus>(port, '/status')).body;
  } catch {
    return undefined;
  }
}

/** Polls /status until `condition` holds (or the deadline passes); returns the last status. */
export async function statusWhen(port: number, condition: (s: GatewayStatus) => boolean, timeoutMs: number): Promise<GatewayStatus | undefined> {
  const end = Date.now() + timeoutMs;
  let last: GatewayStatus | undefined;
  while (Date.now() < end) {
    last = await status(port);
    if (last && condition(last)) return last;
    await sleep(200);
  }
  return last;
}

/** Stops the device and waits until its cycle count no longer moves: every report it will make is made. */
export async function silenceDevice(rig: DeliveryRig, port: number): Promise<number> {
  await rig.sim.close();
  let before = -1;
  for (let i = 0; i < 60; i += 1) {
    await sleep(1000);
    const cycles = (await status(port))?.devices[0]?.cyclesWithValues ?? -1;
    if (cycles === before) return cycles;
    before = cycles;
  }
  return before;
}
