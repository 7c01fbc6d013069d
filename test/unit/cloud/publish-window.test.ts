// The in-flight window shared by both forwarders: acks by prefix whatever order PUBACKs come in,
// ignores callbacks from before a reset, and reports a failure of the current generation only.
import { describe, expect, it } from 'vitest';
import { PublishWindow } from '../../../src/cloud/forwarding/publish-window.js';

function deferred() {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => { resolve = res; reject = rej; });
  return { promise, resolve, reject };
}
const turns = async () => { for (let i = 0; i < 5; i += 1) await Promise.resolve(); };

describe('PublishWindow', () => {
  it.each([
    { name: 'in order', order: [0, 1, 2], acks: [[0], [1], [2]] },
    { name: 'last first', order: [2, 1, 0], acks: [[0, 1, 2]] },
    { name: 'middle first', order: [1, 0, 2], acks: [[0, 1], [2]] },
  ])('acks by prefix when PUBACKs come $name', async ({ order, acks }) => {
    const acked: number[][] = [];
    const window = new PublishWindow<number>({ acked: (items) => acked.push(items), failed: () => undefined });
    const publishes = [0, 1, 2].map(() => deferred());
    publishes.forEach((p, i) => window.track(p.promise, i));
    expect(window.size).toBe(3);
    for (const i of order) {
      publishes[i].resolve();
      await turns();
    }
    expect(acked).toEqual(acks);
    expect(window.size).toBe(0);
  });

  it('ignores acks and failures of publishes made before a reset', async () => {
    const acked: number[][] = [];
    let failures = 0;
    const window = new PublishWindow<number>({ acked: (items) => acked.push(items), failed: () => { failures += 1; } });
    const old = [deferred(), deferred()];
    old.forEach((p, i) => window.track(p.promise, i));
    window.reset();
    expect(window.size).toBe(0);
    const fresh = deferred();
    window.track(fresh.promise, 10);
    old[0].resolve();
    old[1].reject(new Error('link down'));
    await turns();
    expect(acked).toEqual([]);
    expect(failures).toBe(0);
    fresh.reject(new Error('link down'));
    await turns();
    expect(failures).toBe(1);
  });
});
