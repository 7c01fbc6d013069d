// mosquitto_sub / mosquitto_pub processes as independent MQTT clients of the emulator's broker.
import { spawn, type ChildProcess } from 'node:child_process';
import { basename } from 'node:path';
import { waitFor } from './channel-fixtures.js';
import { requireProgram } from '../../helpers/peers.js';

export interface Watched {
  child: ChildProcess;
  lines: string[];
  exitCode: () => number | null | undefined;
  stderr: () => string;
}

export class MosquittoClients {
  private readonly children: ChildProcess[] = [];

  constructor(private readonly port: () => number, private readonly projectKey: string) {}

  run(command: string, args: string[]): Watched {
    requireProgram(command);
    // stdbuf runs the real client: its first argument that is not an option.
    if (basename(command) === 'stdbuf') requireProgram(args.find((arg) => !arg.startsWith('-')) ?? command);
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.children.push(child);
    const lines: string[] = [];
    let stderr = '';
    let exit: number | null | undefined;
    let partial = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      const parts = (partial + chunk.toString('utf8')).split('\n');
      partial = parts.pop() ?? '';
      lines.push(...parts);
    });
    child.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString('utf8'); });
    child.on('exit', (code) => { exit = code; });
    return { child, lines, exitCode: () => exit, stderr: () => stderr };
  }

  common(): string[] {
    return ['-h', '127.0.0.1', '-p', String(this.port()), '-V', 'mqttv311', '-P', this.projectKey];
  }

  /** mosquitto_sub with -d prints SUBACK once subscribed; -v prints "topic payload" per message. */
  async subscribe(token: string, topics: string[]): Promise<Watched> {
    // stdbuf: a piped stdout is block-buffered, and the SUBACK line must show up now.
    const sub = this.run('stdbuf', ['-oL', 'mosquitto_sub', ...this.common(), '-u', token, '-q', '1', '-v', '-d', ...topics.flatMap((topic) => ['-t', topic])]);
    await waitFor(() => sub.lines.some((line) => line.includes('SUBACK')), 'mosquitto_sub SUBACK');
    return sub;
  }

  async publish(token: string, topic: string, message: string): Promise<Watched> {
    const pub = this.run('mosquitto_pub', [...this.common(), '-u', token, '-q', '1', '-t', topic, '-m', message]);
    await waitFor(() => pub.exitCode() !== undefined, 'mosquitto_pub exit');
    return pub;
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.children.splice(0).map((child) => new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    })));
  }
}

/** What mosquitto_sub -v -d printed as messages (its debug lines left out). */
export const messages = (sub: Watched): string[] => sub.lines.filter((line) => !/^(Client |Subscribed )/.test(line) && line.length > 0);
