// A virtual null-modem cable: two linked ptys made by socat (tests, the demo, the bench).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PtyPair {
  /** One end (give it to the simulator). */
  a: string;
  /** The other end (give it to the master). */
  b: string;
  close(): Promise<void>;
}

export async function createPtyPair(timeoutMs = 10_000): Promise<PtyPair> {
  const dir = mkdtempSync(join(tmpdir(), 'fieldgate-pty-'));
  const a = join(dir, 'a');
  const b = join(dir, 'b');
  const child = spawn('socat', [`pty,raw,echo=0,link=${a}`, `pty,raw,echo=0,link=${b}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + timeoutMs;
  while (!(existsSync(a) && existsSync(b))) {
    const failed = await Promise.race([spawnError, sleep(20).then(() => undefined)]);
    if (failed !== undefined || exitedEarly(child) || Date.now() > deadline) {
      await close();
      if (failed !== undefined && Reflect.get(failed, 'code') === 'ENOENT') {
        throw new Error('socat is not installed (it makes the pty pair): install the Debian package socat (sudo apt-get install socat)');
      }
      const why = failed?.message ?? (stderr.trim() || 'timed out waiting for the ptys');
      throw new Error(`socat could not create a pty pair: ${why}`);
    }
  }
  return { a, b, close };
}

function exitedEarly(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
