// The raw exchange of a stream on a shared line: when a reply ends, table-driven on a scripted port.
import { EventEmitter } from 'node:events';
import { beforeEach, describe, expect, it } from 'vitest';
import { exchangeRaw, type RawPort } from '../../../src/field/modbus/raw-exchange.js';
import { ManualClock } from '../../helpers/manual-clock.js';

// Manual time for the exchange's timers and the scripted peer alike.
let clock = new ManualClock();
beforeEach(() => {
  clock = new ManualClock();
});

/** A port whose peer answers with `chunks`, each at its own ms after the request has left. */
class ScriptedPort extends EventEmitter implements RawPort {
  written: Buffer[] = [];
  constructor(private readonly chunks: Array<[number, string]>, private readonly writeError?: Error) {
    super();
  }
  write(data: Buffer, callback: (err: Error | null | undefined) => void): void {
    this.written.push(data);
    clock.setTimer(() => callback(this.writeError ?? null), 0);
  }
  drain(callback: (err: Error | null | undefined) => void): void {
    clock.setTimer(() => {
      for (const [at, text] of this.chunks) clock.setTimer(() => this.emit('data', Buffer.from(text)), at);
      callback(null);
    }, 1);
  }
}

const window = { replyTimeoutMs: 500, quietMs: 20, maxReplyBytes: 8 };

describe('exchangeRaw', () => {
  it.each([
    { name: 'one chunk, then quiet', chunks: [[5, 'OK']], reply: 'OK', endsBy: 5 + 20 },
    { name: 'chunks closer than quietMs form one reply', chunks: [[5, 'AB'], [20, 'CD'], [35, 'EF']], reply: 'ABCDEF', endsBy: 35 + 20 },
    { name: 'a gap longer than quietMs ends the reply', chunks: [[5, 'AB'], [60, 'late']], reply: 'AB', endsBy: 5 + 20 },
    { name: 'cut at maxReplyBytes without waiting for quiet', chunks: [[5, 'ABCDE'], [10, 'FGHIJ']], reply: 'ABCDEFGH', endsBy: 10 },
    { name: 'nothing heard: empty after replyTimeoutMs', chunks: [], reply: '', endsBy: 500 },
    { name: 'a talker that never pauses stops at replyTimeoutMs', chunks: Array.from({ length: 80 }, (_, i) => [5 + i * 10, '.']), reply: '.'.repeat(50), endsBy: 500, maxReplyBytes: 1000 },
  ] as const)('$name', async ({ chunks, reply, endsBy, ...override }) => {
    const port = new ScriptedPort(chunks.map(([at, text]) => [Number(at), String(text)]));
    let result: Buffer | undefined;
    void exchangeRaw(port, Buffer.from('REQ'), { ...window, ...override }, clock).then((r) => (result = r));
    await clock.advanceAsync(endsBy);
    expect(result).toBeUndefined(); // still collecting right up to its end (drain took 1 ms)
    await clock.advanceAsync(2);
    expect(result?.toString()).toBe(reply);
    expect(port.written.map(String)).toEqual(['REQ']);
    expect(port.listenerCount('data')).toBe(0);
  });

  it('rejects when the write fails, and stops listening', async () => {
    const port = new ScriptedPort([], new Error('EIO'));
    const outcome = exchangeRaw(port, Buffer.from('REQ'), window, clock);
    const check = expect(outcome).rejects.toThrow('EIO');
    await clock.advanceAsync(5);
    await check;
    expect(port.listenerCount('data')).toBe(0);
  });
});
