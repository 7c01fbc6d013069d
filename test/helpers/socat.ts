// A virtual serial cable: two ptys joined by socat, reachable through stable symlinks so that a
// pair killed and recreated comes back under the same paths (like a USB adapter replugged).
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startChild, type Child } from './child.js';
import { requireProgram } from './peers.js';
import { waitFor } from './wait.js';

export interface PtyPair {
  /** The master's end (fieldgate opens this). */
  a: string;
  /** The slave's end (pymodbus or a simulator opens this). */
  b: string;
  /** Kills socat (both ptys vanish) and removes the links' directory. */
  stop(): Promise<void>;
}

export function ptyLinks(): { a: string; b: string } {
  const dir = mkdtempSync(join(tmpdir(), 'fieldgate-pty-'));
  return { a: join(dir, 'master'), b: join(dir, 'slave') };
}

export async function startPtyPair(links = ptyLinks()): Promise<PtyPair> {
  requireProgram('socat');
  mkdirSync(dirname(links.a), { recursive: true }); // a previous pair's stop() removed it
  const child: Child = startChild('socat', [
    '-d', '-d', `pty,raw,echo=0,link=${links.a}`, `pty,raw,echo=0,link=${links.b}`,
  ]);
  try {
    await waitFor(() => (existsSync(links.a) && existsSync(links.b)) || child.exited(), { what: 'socat ptys' });
  } catch (err) {
    await child.stop();
    throw err;
  }
  if (child.exited()) throw new Error(`socat exited: ${child.output()}`);
  return {
    ...links,
    async stop() {
      await child.stop();
      rmSync(dirname(links.a), { recursive: true, force: true });
    },
  };
}
