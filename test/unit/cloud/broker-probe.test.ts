// The shared probe loop (pure but for the injected reachability check): one loop per broker
// address whatever the number of waiting links, every waiter told once, no loop left behind.
import { describe, expect, it } from 'vitest';
import { BrokerProbes, type ProbeTarget } from '../../../src/cloud/mqtt/broker-probe.js';
import { eventLoopTurns, ManualClock } from '../../helpers/manual-clock.js';

function probes(answers: boolean[]): { probes: BrokerProbes; clock: ManualClock; asked: ProbeTarget[] } {
  const clock = new ManualClock();
  const asked: ProbeTarget[] = [];
  const result = new BrokerProbes(clock, async (target) => {
    asked.push(target);
    return answers.shift() ?? false;
  });
  return { probes: result, clock, asked };
}

const broker = { host: '127.0.0.1', port: 1883 };

describe('BrokerProbes', () => {
  it('probes one address once per period for all its waiters and tells each once when it answers', async () => {
    const { probes: p, clock, asked } = probes([false, false, true]);
    const told: string[] = [];
    for (const name of ['a', 'b', 'c']) p.watch(broker, 2000, () => told.push(name));
    for (let i = 0; i < 3; i += 1) {
      await clock.advanceAsync(2000);
      await eventLoopTurns();
    }
    expect(asked).toHaveLength(3);
    expect(told).toEqual(['a', 'b', 'c']);
    await clock.advanceAsync(10_000);
    expect(asked).toHaveLength(3);
    expect(clock.sleeping).toBe(0);
  });

  it('stops probing when the last waiter cancels', async () => {
    const { probes: p, clock, asked } = probes([]);
    const cancelA = p.watch(broker, 1000, () => undefined);
    const cancelB = p.watch(broker, 1000, () => undefined);
    await clock.advanceAsync(1000);
    await eventLoopTurns();
    cancelA();
    await clock.advanceAsync(1000);
    await eventLoopTurns();
    expect(asked).toHaveLength(2);
    cancelB();
    await clock.advanceAsync(5000);
    expect(asked).toHaveLength(2);
    expect(clock.sleeping).toBe(0);
  });

  it('keeps separate loops for separate addresses', async () => {
    const { probes: p, clock, asked } = probes([]);
    p.watch(broker, 1000, () => undefined);
    p.watch({ host: '127.0.0.1', port: 8883 }, 1000, () => undefined);
    await clock.advanceAsync(1000);
    await eventLoopTurns();
    expect(asked.map((t) => t.port).sort()).toEqual([1883, 8883]);
  });
});
