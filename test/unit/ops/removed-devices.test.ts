// A leaving device's queue (orchestration with fakes; the real flow is test/system/removed-device.test.ts):
// a replaced device keeps it for its successor, a removed one sends while its link is up within
// sendMs and the rest is dropped and counted after its parts stopped; at start, queues of devices
// the site no longer has are dropped, one line; and so when a file the start could not open is taken up.
import { describe, expect, it } from 'vitest';
import { dropOrphanQueues, dropOrphanQueuesOnTakeUp, retireDevice, type RetiringParts } from '../../../src/ops/removed-devices.js';
import { systemTime } from '../../../src/core/time.js';
import type { SiteConfig } from '../../../src/core/config/site-types.js';
import { captureLogger } from '../../helpers/capture-logger.js';

function parts(queue: Map<string, number>, linkUp: () => boolean, sendMs = 200) {
  const log = captureLogger();
  const calls: string[] = [];
  const retiring: RetiringParts = {
    outbox: { devicesWithBacklog: () => [...queue].filter(([, n]) => n > 0).map(([d]) => d) },
    discard: (device) => {
      const n = queue.get(device) ?? 0;
      queue.set(device, 0);
      calls.push(`discard ${device} ${n}`);
      return n;
    },
    linkUp, sendMs, time: systemTime, log: log.logger,
  };
  return { retiring, log, calls };
}

describe('retireDevice', () => {
  it('a replaced device keeps its queue for the new one: nothing dropped, nothing logged', async () => {
    const queue = new Map([['m1', 5]]);
    const { retiring, log, calls } = parts(queue, () => true);
    await retireDevice('m1', true, retiring, async () => void calls.push('remove'));
    expect(calls).toEqual(['remove']);
    expect(queue.get('m1')).toBe(5);
    expect(log.lines()).toEqual([]);
  });

  it('link down: removed at once, the queue dropped and counted after, one warning', async () => {
    const queue = new Map([['m1', 7], ['m2', 3]]);
    const { retiring, log, calls } = parts(queue, () => false, 60_000);
    await retireDevice('m1', false, retiring, async () => void calls.push('remove'));
    expect(calls).toEqual(['remove', 'discard m1 7']);
    expect(queue.get('m2')).toBe(3);
    expect(log.lines()).toEqual([expect.objectContaining({ msg: 'removed device: queued reports dropped', device: 'm1', dropped: 7, linkUp: false })]);
  });

  it('link up: waits while the queue is being sent; emptied in time, nothing dropped, one info line', async () => {
    const queue = new Map([['m1', 4]]);
    const timer = setInterval(() => queue.set('m1', Math.max(0, (queue.get('m1') ?? 0) - 1)), 20);
    const { retiring, log, calls } = parts(queue, () => true, 30_000);
    await retireDevice('m1', false, retiring, async () => void calls.push('remove'));
    clearInterval(timer);
    expect(calls).toEqual(['remove', 'discard m1 0']);
    expect(log.lines()).toEqual([expect.objectContaining({ msg: 'removed device: queued reports sent', device: 'm1' })]);
  });

  it('link up but the queue does not empty within sendMs: the rest dropped and counted', async () => {
    const queue = new Map([['m1', 9]]);
    const { retiring, log, calls } = parts(queue, () => true, 150);
    await retireDevice('m1', false, retiring, async () => void calls.push('remove'));
    expect(calls).toEqual(['remove', 'discard m1 9']);
    expect(log.lines()).toEqual([expect.objectContaining({ msg: 'removed device: queued reports dropped', dropped: 9, linkUp: true })]);
  });
});

describe('dropOrphanQueues', () => {
  const site = { devices: [{ name: 'kept', cloud: {} }, { name: 'local-only' }] } as unknown as SiteConfig;

  it('drops the queues of devices not in the site (or without a cloud block), one line with the counts', () => {
    const queue = new Map([['kept', 4], ['gone-a', 2], ['gone-b', 5], ['local-only', 1]]);
    const { retiring, log } = parts(queue, () => true);
    dropOrphanQueues(site, retiring);
    expect(queue).toEqual(new Map([['kept', 4], ['gone-a', 0], ['gone-b', 0], ['local-only', 0]]));
    expect(log.lines()).toEqual([expect.objectContaining({ msg: 'queued reports of devices no longer in the site dropped', total: 8, byDevice: { 'gone-a': 2, 'gone-b': 5, 'local-only': 1 } })]);
  });

  it('says nothing when every queue belongs to the site', () => {
    const { retiring, log } = parts(new Map([['kept', 4]]), () => true);
    dropOrphanQueues(site, retiring);
    expect(log.lines()).toEqual([]);
  });
});

describe('dropOrphanQueuesOnTakeUp', () => {
  it('at each take-up of the file, once no reload is applied: the queues of devices the site running then no longer has', async () => {
    const queue = new Map([['kept', 4], ['added-by-reload', 3], ['gone', 2]]);
    const { retiring, log } = parts(queue, () => true);
    let takeUp = () => undefined as void;
    let reloadApplied = () => undefined as void;
    const reloading = new Promise<void>((resolve) => (reloadApplied = resolve));
    const afterReload = { devices: [{ name: 'kept', cloud: {} }, { name: 'added-by-reload', cloud: {} }] } as unknown as SiteConfig;
    dropOrphanQueuesOnTakeUp({ onFileTakenUp: (listener) => (takeUp = listener) }, () => reloading.then(() => afterReload), retiring);
    expect(log.lines()).toEqual([]);
    takeUp();
    await Promise.resolve();
    // A reload is being applied: nothing is judged against the site it replaces.
    expect(queue.get('added-by-reload')).toBe(3);
    reloadApplied();
    await reloading;
    await new Promise((r) => setImmediate(r));
    expect(queue).toEqual(new Map([['kept', 4], ['added-by-reload', 3], ['gone', 0]]));
    expect(log.lines()).toEqual([expect.objectContaining({ msg: 'queued reports of devices no longer in the site dropped', total: 2, byDevice: { gone: 2 } })]);
  });

  it('a failure is logged, never thrown', async () => {
    const { retiring, log } = parts(new Map([['gone', 1]]), () => true);
    retiring.discard = () => {
      throw new Error('injected');
    };
    let takeUp = () => undefined as void;
    dropOrphanQueuesOnTakeUp({ onFileTakenUp: (listener) => (takeUp = listener) }, async () => ({ devices: [] }) as unknown as SiteConfig, retiring);
    takeUp();
    await new Promise((r) => setImmediate(r));
    expect(log.lines()).toEqual([expect.objectContaining({ msg: 'queues of devices no longer in the site not dropped after the outbox file was taken up', level: 50 })]);
  });
});
