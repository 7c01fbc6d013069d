// A state directory behind a fault-injecting FUSE layer (test/helpers/faulty_fs.py, Debian's
// python3-fuse): reads of a byte range of a named file fail with EIO on command, and heal. Needs
// root and /dev/fuse; `canFuse()` says whether this machine can (the tests skip with a reason).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./faulty_fs.py', import.meta.url));
const PYTHON = '/usr/bin/python3';

/**
 * Root, /dev/fuse and Debian's python3-fuse: undefined when a FUSE layer can be mounted, else why
 * not. A missing python3-fuse is a missing peer: no skip under CI=true (the mount then fails).
 */
export function fuseMissing({ ci = process.env.CI === 'true' } = {}): string | undefined {
  if (process.getuid?.() !== 0) return 'a FUSE mount needs root';
  if (!existsSync('/dev/fuse')) return 'no /dev/fuse on this machine';
  if (ci) return undefined;
  try {
    execFileSync(PYTHON, ['-c', 'import fuse'], { stdio: 'ignore' });
  } catch {
    return 'Debian package python3-fuse missing (apt-get install python3-fuse)';
  }
  return undefined;
}

export interface Fault {
  /** A file's path in the directory (e.g. state/outbox.sqlite). */
  name: string;
  /** Bytes [from, to) of it. */
  from: number;
  to: number;
}

export class FaultyFs {
  /** The mounted directory: what the daemon uses as its state directory. */
  readonly path: string;
  /** The same files, unfaulted (for a test's own reads). */
  readonly backing: string;
  private readonly control: string;
  private readonly child: ChildProcess;
  private gen = 0;

  private constructor(private readonly dir: string) {
    this.backing = join(dir, 'backing');
    this.path = join(dir, 'mnt');
    this.control = join(dir, 'control.json');
    mkdirSync(this.backing, { mode: 0o700 });
    mkdirSync(this.path);
    writeFileSync(this.control, JSON.stringify({ gen: 0, faults: [] }));
    this.child = spawn(PYTHON, [SCRIPT, this.backing, this.path, this.control], { stdio: ['ignore', 'ignore', 'pipe'] });
  }

  static async mount(): Promise<FaultyFs> {
    const fs = new FaultyFs(mkdtempSync(join(tmpdir(), 'fg-faulty-')));
    const end = Date.now() + 20_000;
    while (!fs.mounted()) {
      if (Date.now() > end || fs.child.exitCode !== null) throw new Error(`the FUSE layer did not mount at ${fs.path}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return fs;
  }

  private mounted(): boolean {
    try {
      return execFileSync('findmnt', ['-n', '-o', 'FSTYPE', this.path], { encoding: 'utf8' }).trim().startsWith('fuse');
    } catch {
      return false;
    }
  }

  /** The size of a file of the directory now (to place a fault in it). */
  sizeOf(relative: string): number {
    return statSync(join(this.backing, relative)).size;
  }

  /** Reads of these ranges fail from now on (until heal); resolves once the layer applies it. */
  async fail(faults: readonly Fault[]): Promise<void> {
    await this.apply(faults);
  }

  /** The middle fraction [from, to) of a file fails. */
  async failFraction(relative: string, from: number, to: number): Promise<Fault> {
    const size = this.sizeOf(relative);
    const fault = { name: relative, from: Math.floor(size * from), to: Math.ceil(size * to) };
    await this.apply([fault]);
    return fault;
  }

  async heal(): Promise<void> {
    await this.apply([]);
  }

  /** Reads that got EIO so far. */
  eioCount(): number {
    return this.ack().eio;
  }

  private ack(): { gen: number; eio: number } {
    try {
      return JSON.parse(readFileSync(`${this.control}.ack`, 'utf8')) as { gen: number; eio: number };
    } catch {
      return { gen: -1, eio: 0 };
    }
  }

  private async apply(faults: readonly Fault[]): Promise<void> {
    this.gen += 1;
    writeFileSync(this.control, JSON.stringify({ gen: this.gen, faults }));
    // The layer reads the control file at its next read; a read of our own makes sure there is one.
    const end = Date.now() + 10_000;
    while (this.ack().gen < this.gen) {
      if (Date.now() > end) throw new Error('the FUSE layer did not take the new faults');
      try {
        readFileSync(join(this.path, '.probe'));
      } catch {
        // ENOENT is a read of the layer all the same (getattr); the control file is looked at on reads.
      }
      try {
        const probe = join(this.path, '.fault-probe');
        writeFileSync(probe, 'x');
        readFileSync(probe);
      } catch {
        // The next turn.
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Unmounts and waits for the layer's process to exit (nothing left for the run's child guard). */
  async dispose(): Promise<void> {
    try {
      execFileSync('umount', ['-l', this.path], { stdio: 'ignore' });
    } catch {
      // Already gone.
    }
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.kill('SIGTERM');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
