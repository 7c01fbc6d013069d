// `fieldgate read` and `scan` tell how late a unit answers that misses the timeout, against an
// independent raw RTU peer on a socat pty whose unit 2 answers 600 ms after each request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HostilePeer, startHostileRtuPeer } from '../../helpers/hostile-modbus.js';
import { runCli } from '../../helpers/run-cli.js';
import { startPtyPair } from '../../helpers/socat.js';

describe('answer times in the commissioning commands (RTU pty)', () => {
  let peer: HostilePeer;
  let stopPair: () => Promise<void>;
  let path = '';
  beforeAll(async () => {
    const pair = await startPtyPair();
    stopPair = () => pair.stop();
    path = pair.a;
    peer = await startHostileRtuPeer({ healthyUnit: 1, hostileUnit: 2, timeoutMs: 150, lateMs: 600 }, pair.b);
    peer.mode = 'late-silent';
  });
  afterAll(async () => {
    await peer.stop();
    await stopPair();
  });

  const line = () => ['--bus', path, '--baud', '19200', '--parity', 'even'];

  it('read: a unit that answers after the timeout fails, and says how late it answered', async () => {
    const r = await runCli(['read', ...line(), '--unit', '2', '--address', '0', '--timeout', '150']);
    expect(r.code).toBe(69);
    expect(r.out).toBe('');
    const late = /unit 2 answered (\d+) ms after the request, after the 150 ms timeout/.exec(r.err);
    expect(Number(late?.[1])).toBeGreaterThanOrEqual(600);
  }, 30_000);

  it('read: a unit in time reports its answer time', async () => {
    const r = await runCli(['read', ...line(), '--unit', '1', '--address', '3', '--type', 'uint16', '--timeout', '150']);
    expect(r).toMatchObject({ code: 0, out: '1003\n' });
    expect(r.err).toMatch(/^unit 1 answered in \d+ ms \(timeout 150 ms\)$/m);
  }, 30_000);

  it('scan: the late unit is found too, with how late it answers', async () => {
    const r = await runCli(['scan', ...line(), '--units', '1-12', '--timeout', '150']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^unit 1 at 19200 baud: answered in \d+ ms\nunit 2 at 19200 baud: answered \d+ ms after the request, after the 150 ms timeout/);
  }, 60_000);
});
