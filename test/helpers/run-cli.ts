// Runs the fieldgate CLI in-process with captured stdout/stderr and a given environment.
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli.js';

export async function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await main(args, { stdout, stderr, env });
  return { code, out, err };
}
