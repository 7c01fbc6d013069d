// allowBroadcast on a share in front of a real pty line while the bus is polled: a write to TCP
// unit 0 goes on the line as one broadcast frame (unit 0, the client's function, a good CRC), no
// unit answers it and none is awaited, the line stays quiet for the turnaround before the next
// request, the client gets the write echo, and both units hold the value; a read of unit 0 is an
// illegal function and never reaches the line; without allowBroadcast unit 0 is "path unavailable".
// Also through a TCP serial server (rtu-over-tcp), and on a line where some unit answers a broadcast
// anyway (its frame is discarded, nothing else is disturbed).
import { afterEach, describe, expect, it } from 'vitest';
import { truth } from '../../helpers/hostile-modbus.js';
import { mbap, pymodbusRequests, rawClient } from '../../helpers/share-clients.js';
import { waitFor } from '../../helpers/wait.js';
import { startLineTap, startTcpLineTap, type LineTap } from './line-tap.js';
import { startShareRig, type ShareRig } from './share-rig.js';

const rigs: ShareRig[] = [];
afterEach(async () => {
  for (const rig of rigs.splice(0)) await rig.stop();
});

const TURNAROUND_MS = 400;

async function tapRig(share: Record<string, unknown>): Promise<{ rig: ShareRig; tap: LineTap }> {
  let tap: LineTap | undefined;
  const rig = await startShareRig({ share: { access: 'read-write', ...share }, pollEveryMs: 20 }, async (path) => {
    tap = await startLineTap(path, [1, 2]);
    return () => tap!.stop();
  });
  rigs.push(rig);
  return { rig, tap: tap! };
}

/** Sends one MBAP request on a fresh connection and returns the answer's PDU. */
async function ask(port: number, unit: number, pdu: number[]): Promise<Buffer> {
  const client = await rawClient(port);
  try {
    client.socket.write(mbap(7, unit, pdu));
    const answer = await waitFor(() => client.received().length >= 9 && client.received(), { what: 'the share\'s answer' });
    expect(answer.readUInt16BE(0)).toBe(7);
    expect(answer[6]).toBe(unit);
    return answer.subarray(7);
  } finally {
    client.socket.destroy();
  }
}

describe('share broadcast on an RTU line', () => {
  it('puts one unit-0 frame on the line, awaits no reply, holds the line for the turnaround, answers the echo', async () => {
    const { rig, tap } = await tapRig({ allowBroadcast: true, broadcastTurnaroundMs: TURNAROUND_MS });
    await waitFor(() => rig.polls.ok >= 4, { what: 'polls running' });
    const answer = await ask(rig.port, 0, [16, 0, 5, 0, 2, 4, 0x12, 0x34, 0x56, 0x78]);
    expect(answer.toString('hex')).toBe('1000050002');
    const at = tap.heard.findIndex((f) => f.bytes[0] === 0);
    const cast = tap.heard[at]!;
    expect(cast.crcOk).toBe(true);
    expect(cast.bytes.subarray(0, -2).toString('hex')).toBe('0010000500020412345678');
    expect(tap.heard.filter((f) => f.bytes[0] === 0)).toHaveLength(1);
    // No unit answers a broadcast: every frame the tap sent is a reply of unit 1 or 2.
    expect(tap.answered.every((f) => f[0] === 1 || f[0] === 2)).toBe(true);
    // The polls go on after it, and the first request after it waited the turnaround (a lower bound:
    // a loaded machine only makes it later; the margin covers the tap's own stamp of the broadcast).
    await waitFor(() => tap.heard.length > at + 1, { what: 'the next request after the broadcast' });
    const next = tap.heard[at + 1]!;
    expect(next.bytes[0] === 1 || next.bytes[0] === 2).toBe(true);
    expect(next.at - cast.at).toBeGreaterThanOrEqual(TURNAROUND_MS - 50);
    // Both units obeyed it: reads through the share give the written values.
    const results = await pymodbusRequests(rig.port, [{ fc: 3, unit: 1, address: 5, count: 2 }, { fc: 3, unit: 2, address: 4, count: 3 }]);
    expect(results).toEqual([{ registers: [0x1234, 0x5678] }, { registers: [truth(2, 4), 0x1234, 0x5678] }]);
    expect(rig.log.lines().filter((l) => l.msg === 'share write forwarded')).toEqual([
      expect.objectContaining({ unit: 0, function: 16, address: 5, count: 2, broadcast: true }),
    ]);
    expect(rig.bus.stats()).toMatchObject({ timeouts: 0, frameErrors: 0 });
  });

  it('sends FC6 and FC5 as broadcasts, refuses a read of unit 0 with illegal function and puts nothing for it on the line', async () => {
    const { rig, tap } = await tapRig({ allowBroadcast: true, broadcastTurnaroundMs: 100 });
    expect((await ask(rig.port, 0, [6, 0, 9, 0, 42])).toString('hex')).toBe('060009002a');
    expect((await ask(rig.port, 0, [5, 0, 1, 0xff, 0])).toString('hex')).toBe('050001ff00');
    expect((await ask(rig.port, 0, [3, 0, 0, 0, 1])).toString('hex')).toBe('8301');
    const casts = tap.heard.filter((f) => f.bytes[0] === 0);
    expect(casts.map((f) => [f.crcOk, f.bytes.subarray(0, -2).toString('hex')])).toEqual([
      [true, '00060009002a'], [true, '00050001ff00'],
    ]);
    expect(tap.holding(1, 9)).toBe(42);
    expect(tap.holding(2, 9)).toBe(42);
    expect(rig.shares.status()[0]).toMatchObject({ forwarded: 2, refusedByPolicy: 1, failed: 0 });
  });

  it('a unit that answers a broadcast anyway: its frame is discarded and counted, the client still gets the echo, polls go on', async () => {
    const { rig, tap } = await tapRig({ allowBroadcast: true, broadcastTurnaroundMs: 100 });
    await waitFor(() => rig.polls.ok >= 2, { what: 'polls running' });
    tap.settings.answersBroadcast = true;
    const discardedBefore = rig.bus.stats().discardedReplies;
    expect((await ask(rig.port, 0, [6, 0, 9, 0, 42])).toString('hex')).toBe('060009002a');
    expect(tap.answered.some((f) => f[0] === 0)).toBe(true);
    const okBefore = rig.polls.ok;
    await waitFor(() => rig.polls.ok >= okBefore + 4, { what: 'polls after the broadcast' });
    expect(rig.bus.stats().discardedReplies).toBeGreaterThan(discardedBefore);
    expect(rig.polls.failed).toBe(0);
    // The polls read what the units hold, not the stray answer.
    expect(await pymodbusRequests(rig.port, [{ fc: 3, unit: 2, address: 8, count: 2 }])).toEqual([{ registers: [truth(2, 8), 42] }]);
  });

  it('broadcasts through a TCP serial server (rtu-over-tcp) the same way', async () => {
    const tap = await startTcpLineTap([1, 2]);
    try {
      const rig = await startShareRig({
        share: { access: 'read-write', allowBroadcast: true, broadcastTurnaroundMs: TURNAROUND_MS },
        bus: { kind: 'rtu-over-tcp', host: '127.0.0.1', port: tap.port, timeoutMs: 300 }, pollEveryMs: 20,
      }, async () => async () => undefined);
      rigs.push(rig);
      await waitFor(() => rig.polls.ok >= 4, { what: 'polls running' });
      expect((await ask(rig.port, 0, [6, 0, 9, 0, 42])).toString('hex')).toBe('060009002a');
      const at = tap.heard.findIndex((f) => f.bytes[0] === 0);
      expect(tap.heard[at]).toMatchObject({ crcOk: true });
      expect(tap.heard[at]!.bytes.subarray(0, -2).toString('hex')).toBe('00060009002a');
      await waitFor(() => tap.heard.length > at + 1, { what: 'the next request after the broadcast' });
      expect(tap.heard[at + 1]!.at - tap.heard[at]!.at).toBeGreaterThanOrEqual(TURNAROUND_MS - 50);
      expect([tap.holding(1, 9), tap.holding(2, 9)]).toEqual([42, 42]);
      expect(rig.bus.stats()).toMatchObject({ timeouts: 0, frameErrors: 0 });
    } finally {
      for (const rig of rigs.splice(0)) await rig.stop();
      await tap.stop();
    }
  });

  it('without allowBroadcast answers unit 0 "path unavailable", reads and writes alike, and the line never sees unit 0', async () => {
    const { rig, tap } = await tapRig({});
    await waitFor(() => rig.polls.ok >= 2, { what: 'polls running' });
    expect((await ask(rig.port, 0, [6, 0, 9, 0, 42])).toString('hex')).toBe('860a');
    expect((await ask(rig.port, 0, [3, 0, 0, 0, 1])).toString('hex')).toBe('830a');
    expect(tap.heard.filter((f) => f.bytes[0] === 0)).toEqual([]);
    expect(tap.holding(1, 9)).toBe(truth(1, 9));
  });
});
