// test/helpers/notify_listener.py as a NOTIFY_SOCKET for a daemon started by the arm64 harness.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { waitFor } from '../helpers/wait.js';

export interface NotifyMessage {
  pid: number | null;
  message: string;
}

export async function startNotifyListener(path: string): Promise<{ path: string; messages(): NotifyMessage[]; stop(): void }> {
  const script = new URL('../helpers/notify_listener.py', import.meta.url).pathname;
  // Debian's python3: the one first on PATH may be another.
  const child = spawn('/usr/bin/python3', [script, path], { stdio: ['ignore', 'pipe', 'inherit'] });
  const received: NotifyMessage[] = [];
  let listening = false;
  createInterface({ input: child.stdout }).on('line', (line) => {
    const event = JSON.parse(line) as NotifyMessage & { listening?: boolean };
    if (event.listening) listening = true;
    else received.push(event);
  });
  await waitFor(() => listening, { what: 'notify listener' });
  return { path, messages: () => [...received], stop: () => child.kill('SIGTERM') };
}
