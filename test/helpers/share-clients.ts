// Independent Modbus TCP masters against a bus share: pymodbus (Debian's /usr/bin/python3) and
// mbpoll (libmodbus), plus a raw socket for hostile frames.
import { execFile } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PYTHON } from './pymodbus.js';
import { requirePythonModules } from './peers.js';

const run = promisify(execFile);
const CLIENT = fileURLToPath(new URL('./pymodbus_client.py', import.meta.url));

export interface ClientOp { fc: number; unit: number; address: number; count?: number; values?: Array<number | boolean> }
export type ClientResult = { registers: number[] } | { bits: boolean[] } | { ok: true } | { exception: number } | { error: string };

export async function pymodbusRequests(port: number, ops: ClientOp[]): Promise<ClientResult[]> {
  requirePythonModules(PYTHON, ['pymodbus']);
  const { stdout } = await run(PYTHON, [CLIENT, String(port), JSON.stringify(ops)], { timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').pop() ?? '[]') as ClientResult[];
}

/** mbpoll reading `count` holding registers from PDU address `start` once; the values, or its output when it failed. */
export async function mbpollHolding(port: number, unit: number, start: number, count: number): Promise<{ values: number[]; output: string }> {
  const args = ['-m', 'tcp', '-p', String(port), '-a', String(unit), '-t', '4', '-0', '-r', String(start), '-c', String(count), '-1', '-o', '3', '127.0.0.1'];
  const result = await run('mbpoll', args, { timeout: 30_000 }).catch((err: { stdout?: string; stderr?: string }) => ({ stdout: err.stdout ?? '', stderr: err.stderr ?? '' }));
  const output = `${result.stdout}${result.stderr}`;
  const values = [...result.stdout.matchAll(/^\[(\d+)\]:\s+(-?\d+)/gm)].map((m) => Number(m[2]));
  return { values, output };
}

/** A raw TCP connection to the share: bytes in, whatever comes back, and whether the share closed it. */
export async function rawClient(port: number): Promise<{ socket: Socket; received: () => Buffer; closed: Promise<void> }> {
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  return { socket, received: () => Buffer.concat(chunks), closed };
}

/** A request frame: MBAP header around `pdu`. */
export function mbap(transactionId: number, unit: number, pdu: number[], protocolId = 0): Buffer {
  const frame = Buffer.alloc(7 + pdu.length);
  frame.writeUInt16BE(transactionId, 0);
  frame.writeUInt16BE(protocolId, 2);
  frame.writeUInt16BE(pdu.length + 1, 4);
  frame[6] = unit;
  Buffer.from(pdu).copy(frame, 7);
  return frame;
}
