// Stall detection for the systemd watchdog and /healthz: pollers and links that stop moving.
import { describe, expect, it } from 'vitest';
import { busProgress, linkProgress, ProgressWatch, type LoopProgress } from '../../src/ops/watchdog.js';
import { devicesCarried, siteProgress } from '../../src/ops/supervision.js';
import type { SiteConfig } from '../../src/core/config/site-types.js';
import type { ReportOutbox } from '../../src/core/outbox-types.js';

describe('ProgressWatch', () => {
  it('flags a loop whose counter has not moved for longer than expected, and clears it when it moves', () => {
    let loops: LoopProgress[] = [{ name: 'poller a', counter: 1, expectedWithinMs: 100 }];
    const watch = new ProgressWatch(() => loops);
    expect(watch.stalled(0)).toEqual([]);
    expect(watch.stalled(100)).toEqual([]);
    expect(watch.stalled(101)).toEqual(['poller a']);
    loops = [{ name: 'poller a', counter: 2, expectedWithinMs: 100 }];
    expect(watch.stalled(150)).toEqual([]);
  });

  it('starts a loop\'s clock afresh when it comes back after having nothing to do', () => {
    let loops: LoopProgress[] = [{ name: 'link m1', counter: 7, expectedWithinMs: 100 }];
    const watch = new ProgressWatch(() => loops);
    watch.stalled(0);
    loops = []; // link down, or outbox empty: nothing expected
    watch.stalled(50);
    loops = [{ name: 'link m1', counter: 7, expectedWithinMs: 100 }];
    expect(watch.stalled(1_000)).toEqual([]);
    expect(watch.stalled(1_101)).toEqual(['link m1']);
  });
});

describe('linkProgress', () => {
  const links = [
    { device: 'up-with-backlog', up: true, backlog: 3, acked: 10 },
    { device: 'up-idle', up: true, backlog: 0, acked: 10 },
    { device: 'down-with-backlog', up: false, backlog: 500, acked: 4 },
  ];
  it.each([
    { keepaliveS: 60, slackMs: undefined, expectedWithinMs: 150_000 },
    { keepaliveS: 120, slackMs: undefined, expectedWithinMs: 270_000 },
    { keepaliveS: 10, slackMs: 3000, expectedWithinMs: 23_000 },
    { keepaliveS: 60, slackMs: 600_000, expectedWithinMs: 720_000 },
  ])('expects only up links with a backlog to move (keepalive $keepaliveS s, slack $slackMs ms)', ({ keepaliveS, slackMs, expectedWithinMs }) => {
    expect(linkProgress(links, keepaliveS, slackMs)).toEqual([{ name: 'link up-with-backlog', counter: 10, expectedWithinMs }]);
  });
});

describe('busProgress', () => {
  it('expects good replies only from a bus whose requests fail while some unit is not cooling down', () => {
    const buses = [
      { bus: 'failing', goodReplies: 5, expected: true },
      { bus: 'healthy-or-idle', goodReplies: 900, expected: false },
    ];
    expect(busProgress(buses, () => 30_000)).toEqual([{ name: 'bus failing', counter: 5, expectedWithinMs: 90_000 }]);
    expect(busProgress(buses, () => 30_000, 5000)).toEqual([{ name: 'bus failing', counter: 5, expectedWithinMs: 65_000 }]);
  });

  it('lets timed-out cycles stall the watchdog: only a good reply moves the counter', () => {
    let goodReplies = 5;
    const watch = new ProgressWatch(() => busProgress([{ bus: 'plc', goodReplies, expected: true }], () => 1_000));
    watch.stalled(0);
    expect(watch.stalled(32_001)).toEqual(['bus plc']); // any number of timed-out cycles in between
    goodReplies += 1;
    expect(watch.stalled(32_002)).toEqual([]);
  });
});

describe('siteProgress: the gateway-mode link', () => {
  const site = { buses: [], devices: [] } as unknown as SiteConfig;
  function sources(depths: Record<string, number>, acked: number, subDevices: string[]) {
    const devices = Object.fromEntries(Object.entries(depths).map(([d, depth]) => [d, { depth, bytes: depth * 10, dropped: 0 }]));
    return {
      pollers: new Map(), buses: [], keepaliveS: 10, subDevices: new Set(subDevices),
      links: () => [{ device: '@fieldgate', state: 'up' as const, reconnects: 0, publishes: acked }, { device: 'direct', state: 'up' as const, reconnects: 0, publishes: 3 }],
      outbox: { stats: () => ({ devices }) } as unknown as ReportOutbox,
    };
  }

  it('counts the sub-devices\' rows as the identity link\'s backlog (rows are stored under their names)', () => {
    expect(devicesCarried('@fieldgate', new Set(['sub-1', 'sub-2']))).toEqual(['@fieldgate', 'sub-1', 'sub-2']);
    expect(devicesCarried('direct', new Set(['sub-1']))).toEqual(['direct']);
    const loops = siteProgress(() => site, sources({ 'sub-1': 4, 'sub-2': 1, direct: 0 }, 7, ['sub-1', 'sub-2']))();
    expect(loops).toEqual([{ name: 'link @fieldgate', counter: 7, expectedWithinMs: 50_000 }]);
  });

  it('an identity link that is up with sub-device reports waiting and acknowledges nothing is stalled; a removed sub-device no longer counts', () => {
    const subs = ['sub-1'];
    const watch = new ProgressWatch(siteProgress(() => site, sources({ 'sub-1': 4, 'sub-9': 8 }, 7, subs)));
    expect(watch.stalled(0)).toEqual([]);
    expect(watch.stalled(50_001)).toEqual(['link @fieldgate']);
    const none = new ProgressWatch(siteProgress(() => site, sources({ 'sub-9': 8 }, 7, subs)));
    none.stalled(0);
    expect(none.stalled(100_000)).toEqual([]);
  });
});
