// Runs the fieldgate CLI in-process with captured stdout/stderr and a given environment.
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli.js';
import type { CliIo } from '../../src/cli/io.js';

/** CLI streams that record what is written to them. */
export function capturedIo(env: NodeJS.ProcessEnv = {}): { io: CliIo; out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  return { io: { stdout, stderr, env }, out: () => out, err: () => err };
}

export async function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string; err: string }> {
  const captured = capturedIo(env);
  const code = await main(args, captured.io);
  return { code, out: captured.out(), err: captured.err() };
}
