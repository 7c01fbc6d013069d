import { describe, expect, it } from 'vitest';
import {
  classifyUplink, responseTopic, scopeDownlink, scopeSubscription, scopeUnsubscription, scopeUplink, topicProblem,
  unscopeForDevice,
} from '../../../packages/emulator/src/channel/scoping.js';

describe('scopeSubscription', () => {
  it.each([
    ['attributes/push', '$dev/dev-A/attributes/push'],
    ['command/send/+', '$dev/dev-A/command/send/+'],
    ['#', '$dev/dev-A/#'],
    ['+/#', '$dev/dev-A/+/#'],
    ['dev-B/#', '$dev/dev-A/dev-B/#'],
    ['$dev/dev-A/attributes/push', '$dev/dev-A/attributes/push'],
    ['$SYS/#', undefined],
    ['$dev/dev-B/#', undefined],
    ['$up/dev-A/#', undefined],
    ['$dev/dev-A/$up/dev-B/#', undefined],
    ['$dev/dev-A/', undefined],
    ['$share/g/x', undefined],
    ['', undefined],
    ['a/#/b', undefined],
    ['a+', undefined],
  ])('%j -> %j', (filter, expected) => {
    expect(scopeSubscription('dev-A', filter)).toBe(expected);
  });

  it.each(['attributes/push', 'command/send/+', '#', 'a/b/c'])('is idempotent for %j (session restore)', (filter) => {
    const once = scopeSubscription('dev-A', filter);
    expect(once).toBeDefined();
    expect(scopeSubscription('dev-A', once ?? '')).toBe(once);
  });

  it('encodes device ids so they stay one level', () => {
    expect(scopeSubscription('a/b+#', '#')).toBe('$dev/a%2Fb%2B%23/#');
  });
});

describe('scopeUnsubscription', () => {
  it.each([
    ['attributes/push', '$dev/dev-A/attributes/push'],
    ['$dev/dev-A/x', '$dev/dev-A/x'],
    ['$SYS/#', '$dev/dev-A/$SYS/#'],
    ['$dev/dev-B/#', '$dev/dev-A/$dev/dev-B/#'],
  ])('%j -> %j (always inside the own box)', (filter, expected) => {
    expect(scopeUnsubscription('dev-A', filter)).toBe(expected);
  });
});

describe('unscopeForDevice', () => {
  it.each([
    ['$dev/dev-A/attributes/push', 'attributes/push'],
    ['attributes/push', 'attributes/push'],
    ['$dev/dev-B/attributes/push', undefined],
    ['$up/dev-A/attributes', undefined],
    ['$SYS/broker/heartbeat', undefined],
  ])('%j -> %j', (topic, expected) => {
    expect(unscopeForDevice('dev-A', topic)).toBe(expected);
  });
});

describe('downlink and uplink names', () => {
  it('scopes a cloud topic into the device box and refuses bad names', () => {
    expect(scopeDownlink('dev-A', 'data/s/set')).toBe('$dev/dev-A/data/s/set');
    expect(() => scopeDownlink('dev-A', 'a/#')).toThrow(/wildcards/);
    expect(() => scopeDownlink('dev-A', '$SYS/x')).toThrow(/reserved/);
    expect(() => scopeDownlink('', 'x')).toThrow(/device id/);
  });

  it('keeps uplinks apart from downlinks', () => {
    expect(scopeUplink('dev-A', 'attributes')).toBe('$up/dev-A/attributes');
  });

  it.each([
    ['', 'topic is empty'],
    ['a\u0000b', 'topic contains a NUL character'],
    ['a/#/b', '# must be the last level on its own'],
    ['a/b+', '+ must occupy a whole level'],
  ])('topicProblem(%j)', (topic, problem) => {
    expect(topicProblem(topic, true)).toBe(problem);
  });
});

describe('classifyUplink', () => {
  it.each([
    ['attributes', { kind: 'report' }, 'attributes/response'],
    ['attributes/get/1000', { kind: 'attributesGet', requestId: '1000' }, 'attributes/get/response/1000'],
    ['command/reply/7', { kind: 'commandReply', requestId: '7' }, 'command/reply/response/7'],
    ['event/report/3', { kind: 'event', requestId: '3' }, 'event/response/3'],
    ['data/modbus_raw', { kind: 'streamData', identifier: 'modbus_raw' }, undefined],
    ['gateway/attributes', { kind: 'gateway', message: 'report' }, 'gateway/attributes/response'],
    ['gateway/connect', { kind: 'gateway', message: 'connect' }, 'gateway/connect/response'],
    ['gateway/disconnect', { kind: 'gateway', message: 'disconnect' }, 'gateway/disconnect/response'],
    ['gateway/event/report', { kind: 'gateway', message: 'event' }, 'gateway/event/response'],
    ['gateway/attributes/get', { kind: 'gateway', message: 'attributesGet' }, 'gateway/attributes/get/response'],
    ['gateway/command/reply', { kind: 'gateway', message: 'commandReply' }, 'gateway/command/reply/response'],
  ])('%j is accepted', (topic, expected, response) => {
    const uplink = classifyUplink(topic);
    expect(uplink).toEqual(expected);
    expect(uplink && responseTopic(uplink)).toBe(response);
  });

  it.each([
    'attributes/push', 'attributes/response', 'attributes/get', 'attributes/get/1/x', 'command/send/1',
    'command/reply', 'event/report', 'data', 'data/x/set', 'data//', '$SYS/x', 'foo',
    'gateway', 'gateway/attributes/push', 'gateway/command/send', 'gateway/attributes/response', 'gateway/attributes/',
    'gateway/event/report/1', 'gateway/connect/x', 'Gateway/attributes', 'gateway//attributes', 'gateway/constructor',
    '/attributes', 'attributes/',
  ])('%j is refused', (topic) => {
    expect(classifyUplink(topic)).toBeUndefined();
  });
});
