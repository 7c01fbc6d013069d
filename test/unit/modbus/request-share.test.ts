// RequestQueue's bound on the bus time 'high' (cloud) work takes while polls wait: a simulated
// line serving one item at a time, each charged its duration.
import { describe, expect, it } from 'vitest';
import { type Priority, RequestQueue } from '../../../src/field/modbus/request-queue.js';

interface Item { priority: Priority; ms: number }

/** Serves `steps` items, refilling both levels so both always wait; returns the high share of time. */
function serve(share: number, highMs: number, normalMs: number, steps = 1000): number {
  const queue = new RequestQueue<Item>(100, share);
  const time: Record<Priority, number> = { high: 0, share: 0, normal: 0 };
  const waiting: Record<Priority, number> = { high: 0, share: 0, normal: 0 };
  for (let i = 0; i < steps; i += 1) {
    for (const priority of ['high', 'normal'] as const) {
      for (; waiting[priority] < 5; waiting[priority] += 1) queue.push({ priority, ms: priority === 'high' ? highMs : normalMs }, priority);
    }
    const item = queue.shift() as Item;
    waiting[item.priority] -= 1;
    time[item.priority] += item.ms;
    queue.charge(item, item.priority, item.ms);
  }
  return time.high / (time.high + time.normal);
}

describe('RequestQueue bus-time share', () => {
  it.each([
    [0.5, 10, 10],
    [0.5, 40, 10],
    [0.5, 10, 40],
    [0.2, 10, 10],
    [0.8, 25, 5],
    [0.05, 10, 10],
  ])('share %f with high jobs of %i ms and polls of %i ms', (share, highMs, normalMs) => {
    const measured = serve(share, highMs, normalMs);
    // One job of either kind is the granularity: the share holds within it.
    const slack = Math.max(highMs, normalMs) / (1000 * Math.min(highMs, normalMs));
    expect(Math.abs(measured - share)).toBeLessThanOrEqual(slack + 0.02);
  });

  it('share 1 keeps the old rule: high always first', () => {
    expect(serve(1, 10, 10)).toBe(1);
  });

  it('without waiting polls, high work runs back to back and owes nothing afterwards', () => {
    const queue = new RequestQueue<string>(100, 0.5);
    for (let i = 0; i < 5; i += 1) queue.push(`w${i}`, 'high');
    const order: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const item = queue.shift() as string;
      order.push(item);
      queue.charge(item, 'high', 100);
    }
    queue.push('p1', 'normal');
    queue.push('w5', 'high');
    // Nothing was owed: the write still jumps the poll once.
    expect([...order, queue.shift()]).toEqual(['w0', 'w1', 'w2', 'w3', 'w4', 'w5']);
  });

  it('after a jump, polls are served until the time is paid back, then high again', () => {
    const queue = new RequestQueue<{ name: string }>(100, 0.5);
    for (const name of ['p1', 'p2', 'p3']) queue.push({ name }, 'normal');
    for (const name of ['w1', 'w2']) queue.push({ name }, 'high');
    const order: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const item = queue.shift() as { name: string };
      order.push(item.name);
      queue.charge(item, item.name.startsWith('w') ? 'high' : 'normal', item.name === 'w1' ? 30 : 10);
    }
    expect(order).toEqual(['w1', 'p1', 'p2', 'p3', 'w2']);
  });

  it('high work that runs while every waiting poll is for a busy unit is not charged as a jump', () => {
    const queue = new RequestQueue<{ name: string; unit: number }>(100, 0.5);
    queue.push({ name: 'p1', unit: 1 }, 'normal');
    queue.push({ name: 'w1', unit: 2 }, 'high');
    queue.push({ name: 'w2', unit: 2 }, 'high');
    const unit1Busy = (item: { unit: number }) => item.unit !== 1;
    for (const expected of ['w1', 'w2']) {
      const item = queue.shift(unit1Busy)!;
      expect(item.name).toBe(expected);
      queue.charge(item, 'high', 30);
    }
    // No poll could have run in that time: nothing is owed, the next write still goes first.
    queue.push({ name: 'w3', unit: 2 }, 'high');
    expect(queue.shift()?.name).toBe('w3');
  });

  it('a jumped item refused before it runs (never charged) costs nothing and leaks nothing', () => {
    const queue = new RequestQueue<{ name: string }>(100, 0.5);
    queue.push({ name: 'p1' }, 'normal');
    queue.push({ name: 'w1' }, 'high');
    queue.push({ name: 'w2' }, 'high');
    expect(queue.shift()?.name).toBe('w1'); // refused by the bus (cool-down): no charge follows
    expect(queue.shift()?.name).toBe('w2');
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses share %f', (share) => {
    expect(() => new RequestQueue<string>(10, share)).toThrow(RangeError);
  });
});

describe('RequestQueue: the share class (other masters through a bus share)', () => {
  /** Polls, share requests and (optionally) high work always waiting; returns each class's share of time. */
  function serveThree(lineShare: number, highShare: number, withHigh: boolean, steps = 2000): Record<Priority, number> {
    const queue = new RequestQueue<Item>(100, highShare);
    queue.setLineShare(lineShare);
    const time: Record<Priority, number> = { high: 0, share: 0, normal: 0 };
    const waiting: Record<Priority, number> = { high: 0, share: 0, normal: 0 };
    const classes: Priority[] = withHigh ? ['high', 'share', 'normal'] : ['share', 'normal'];
    for (let i = 0; i < steps; i += 1) {
      for (const priority of classes) for (; waiting[priority] < 5; waiting[priority] += 1) queue.push({ priority, ms: 10 }, priority);
      const item = queue.shift() as Item;
      waiting[item.priority] -= 1;
      time[item.priority] += item.ms;
      queue.charge(item, item.priority, item.ms);
    }
    const total = time.high + time.share + time.normal;
    return { high: time.high / total, share: time.share / total, normal: time.normal / total };
  }

  it.each([0.1, 0.25, 0.5])('a flood of share requests takes about lineShare %f while polls wait', (lineShare) => {
    const measured = serveThree(lineShare, 1, false);
    expect(Math.abs(measured.share - lineShare)).toBeLessThanOrEqual(0.02);
  });

  it('with cloud work also flooding, polls keep at least what neither class may take', () => {
    const measured = serveThree(0.25, 0.5, true);
    expect(measured.normal).toBeGreaterThan(0.2);
    expect(measured.share).toBeGreaterThan(0.05);
    expect(measured.high).toBeGreaterThan(0.05);
  });

  it('without waiting polls, share requests run back to back', () => {
    const queue = new RequestQueue<string>(100, 1);
    queue.setLineShare(0.1);
    for (let i = 0; i < 3; i += 1) queue.push(`s${i}`, 'share');
    const order = [queue.shift(), queue.shift(), queue.shift()];
    expect(order).toEqual(['s0', 's1', 's2']);
  });

  it('drains every class and refuses a share outside (0, 1]', () => {
    const queue = new RequestQueue<string>(3, 1);
    queue.push('p', 'normal');
    queue.push('s', 'share');
    queue.push('h', 'high');
    expect(queue.push('x', 'share')).toBe(false);
    expect(queue.drain().sort()).toEqual(['h', 'p', 's']);
    expect(() => queue.setLineShare(0)).toThrow(RangeError);
  });
});
