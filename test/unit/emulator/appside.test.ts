// App-side filters and the feed's backlog bound (pure parts of packages/emulator/src/appside).
import { describe, expect, it } from 'vitest';
import { AppFeed } from '../../../packages/emulator/src/appside/feed.js';
import { appTopic, checkAppFilter, dataPayload } from '../../../packages/emulator/src/appside/topics.js';
import type { DeviceRecord } from '../../../packages/emulator/src/state/model.js';
import { silentLogger } from '../../../src/ops/log.js';

const device = { id: 'd1', name: 'Pump', type: 't1', device_key: 'k1', view_token: 'vt1' } as DeviceRecord;

describe('checkAppFilter', () => {
  it.each([
    ['K/+/attributes', { ok: true, device: undefined, kind: 'attributes' }],
    ['K/vt1/command_reply', { ok: true, device: 'vt1', kind: 'command_reply' }],
    ['K/vt1/online', { ok: true, device: 'vt1', kind: 'online' }],
  ])('grants %s', (filter, verdict) => {
    expect(checkAppFilter('K', filter)).toEqual(verdict);
  });

  it.each([
    ['#', 'filter must be'], ['K/#', 'filter must be'], ['K/+/+', 'unknown message kind'], ['X/+/attributes', 'outside the project'],
    ['k/+/attributes', 'outside the project'], ['K//attributes', 'device level'], ['K/a+/event', 'device level'],
    ['K/+/attributes/x', 'filter must be'], ['+/vt1/attributes', 'outside the project'], ['K/+/Attributes', 'unknown message kind'],
    ['', 'filter must be'],
    // Alarms and recoveries are not carried (docs/protocol.md §8): refused, never granted and silent.
    ['K/+/alarm', 'unknown message kind'], ['K/vt1/alarms', 'unknown message kind'], ['K/+/recovery', 'unknown message kind'],
  ])('refuses %s', (filter, reason) => {
    const verdict = checkAppFilter('K', filter);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) expect(verdict.reason).toContain(reason);
  });
});

describe('app payloads', () => {
  it('names the topic by view token and carries raw data as base64', () => {
    expect(appTopic('K', device.view_token, 'data')).toBe('K/vt1/data');
    expect(dataPayload(device, undefined, Buffer.from([0xff, 0]), 5)).toEqual({
      data: { identifier: null, via: 'tcp', base64: '/wA=' }, device: { id: 'd1', name: 'Pump', type: 't1', device_key: 'k1' }, ts: 5,
    });
  });
});

describe('AppFeed', () => {
  it('hands at most maxPending messages to a broker that has not finished them, and counts the rest', () => {
    const held: (() => void)[] = [];
    const topics: string[] = [];
    const feed = new AppFeed('K', { publish: (topic, _p, done) => { topics.push(topic); held.push(done); } }, 3, () => 1, silentLogger());
    for (let i = 0; i < 10; i += 1) feed.online(device, i % 2 === 0);
    expect(topics).toEqual(['K/vt1/online', 'K/vt1/online', 'K/vt1/online']);
    expect(feed.inFlight).toBe(3);
    expect(feed.droppedBacklog).toBe(7);
    held.shift()?.();
    feed.event(device, '9', { method: 'm', params: {} });
    expect(topics.at(-1)).toBe('K/vt1/event');
    expect(feed.inFlight).toBe(3);
  });
});
