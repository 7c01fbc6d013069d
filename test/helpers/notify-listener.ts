// An independent NOTIFY_SOCKET listener (notify_listener.py on Debian's python3): what systemd
// would read, each datagram with the sender's pid.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { requireProgram } from './peers.js';

export interface Datagram {
  pid: number | null;
  message: string;
}

export async function pythonListener(path: string): Promise<{ child: ChildProcess; datagrams: Datagram[] }> {
  const script = join(import.meta.dirname, 'notify_listener.py');
  requireProgram('/usr/bin/python3');
  const child = spawn('/usr/bin/python3', [script, path], { stdio: ['ignore', 'pipe', 'inherit'] });
  const datagrams: Datagram[] = [];
  let listening = false;
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const event = JSON.parse(line) as Datagram & { listening?: boolean };
    if (event.listening) listening = true;
    else datagrams.push(event);
  });
  const end = Date.now() + 10_000;
  while (!listening) {
    if (Date.now() > end || child.exitCode !== null) throw new Error('notify listener did not start');
    await new Promise((r) => setTimeout(r, 20));
  }
  return { child, datagrams };
}
