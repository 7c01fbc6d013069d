// Starts a helper process in its own process group and stops it for sure (SIGTERM, then SIGKILL,
// to the group: nothing it started stays behind), collecting its output.
import { spawn, type ChildProcess } from 'node:child_process';
import { endGroup } from './process-groups.js';

/**
 * Node arguments for a TypeScript child process run from source: tsx, and the "fieldgate-source"
 * export condition so the workspace packages and `fieldgate/workspace-kit` load their sources, not dist/.
 */
export const TSX_FROM_SOURCE = ['--conditions=fieldgate-source', '--import', 'tsx'];

export interface Child {
  proc: ChildProcess;
  output(): string;
  exited(): boolean;
  stop(): Promise<void>;
}

export function startChild(command: string, args: string[]): Child {
  const proc = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  let exited = false;
  proc.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString('utf8'); });
  proc.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString('utf8'); });
  const done = new Promise<void>((resolve) => {
    proc.once('exit', () => { exited = true; resolve(); });
    proc.once('error', (err) => { output += String(err); exited = true; resolve(); });
  });
  return {
    proc,
    output: () => output,
    exited: () => exited,
    async stop() {
      await endGroup(proc, 3000);
      await done;
    },
  };
}
