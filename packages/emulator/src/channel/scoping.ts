// Pure topic mapping between what a device sees (un-prefixed topics) and the broker's global
// topic space. Two namespaces per device keep every device in its own box:
//   `$dev/<id>/<topic>`  downlink: the device's subscriptions and everything published to it;
//   `$up/<id>/<topic>`   uplink: what the device publishes (only the channel consumes it).
// Both start with `$`, which a device may never use itself (its `$...` subscriptions are refused
// and its publish topics are allow-listed), so a scoped topic can never be forged from the wire.
// Uplink and downlink are apart so a device subscribing `#` never hears its own reports echoed.

const DOWN_ROOT = '$dev/';
const UP_ROOT = '$up/';

/** Device ids may hold `/`, `+`, `#`: encode them into one harmless topic level. */
export function encodeDeviceId(deviceId: string): string {
  if (deviceId.length === 0) throw new Error('device id must not be empty');
  return encodeURIComponent(deviceId);
}

export function downlinkPrefix(deviceId: string): string {
  return `${DOWN_ROOT}${encodeDeviceId(deviceId)}/`;
}

export function uplinkPrefix(deviceId: string): string {
  return `${UP_ROOT}${encodeDeviceId(deviceId)}/`;
}

/** Why a topic a device (or the cloud) names is unusable, or undefined when it is fine. */
export function topicProblem(topic: string, allowWildcards: boolean): string | undefined {
  if (topic.length === 0) return 'topic is empty';
  if (topic.includes('\u0000')) return 'topic contains a NUL character';
  if (topic.startsWith('$')) return 'topics starting with $ are reserved';
  const levels = topic.split('/');
  for (let i = 0; i < levels.length; i += 1) {
    const level = levels[i];
    if (!allowWildcards && (level.includes('+') || level.includes('#'))) {
      return 'wildcards are not allowed in a topic name';
    }
    if (level.includes('#') && (level !== '#' || i !== levels.length - 1)) {
      return '# must be the last level on its own';
    }
    if (level.includes('+') && level !== '+') return '+ must occupy a whole level';
  }
  return undefined;
}

/** Global topic for a message the cloud sends to a device's un-prefixed topic. */
export function scopeDownlink(deviceId: string, topic: string): string {
  const problem = topicProblem(topic, false);
  if (problem !== undefined) throw new Error(`invalid device topic "${topic}": ${problem}`);
  return downlinkPrefix(deviceId) + topic;
}

/** Global topic for a device's own publish (after the allow-list let it through). */
export function scopeUplink(deviceId: string, topic: string): string {
  return uplinkPrefix(deviceId) + topic;
}

/**
 * Global filter for a device's subscription, or undefined to refuse it. Idempotent: aedes
 * restores a persistent session by authorising the stored, already scoped filter again.
 */
export function scopeSubscription(deviceId: string, filter: string): string | undefined {
  const prefix = downlinkPrefix(deviceId);
  if (filter.startsWith(prefix)) {
    return topicProblem(filter.slice(prefix.length), true) === undefined ? filter : undefined;
  }
  if (topicProblem(filter, true) !== undefined) return undefined;
  return prefix + filter;
}

/**
 * Global filter for a device's UNSUBSCRIBE. Mirrors scopeSubscription; a filter that could never
 * have been granted maps to an own-scoped name that matches no subscription (a harmless no-op).
 */
export function scopeUnsubscription(deviceId: string, filter: string): string {
  return scopeSubscription(deviceId, filter) ?? downlinkPrefix(deviceId) + filter;
}

/**
 * The topic a device must see for a global topic, or undefined when the message is not the
 * device's to see. Idempotent: a topic without any `$` root is taken as already un-prefixed
 * (aedes may hand the same queued packet over twice).
 */
export function unscopeForDevice(deviceId: string, topic: string): string | undefined {
  const prefix = downlinkPrefix(deviceId);
  if (topic.startsWith(prefix)) return topic.slice(prefix.length);
  if (topic.startsWith('$')) return undefined;
  return topic;
}

import { classifyGatewayUplink, gatewayResponseTopic, type GatewayUplinkKind } from './gateway-topics.js';

/** The device-channel topics a device may publish (docs/protocol.md §3). */
export type UplinkTopic =
  | { kind: 'report' }
  | { kind: 'attributesGet'; requestId: string }
  | { kind: 'commandReply'; requestId: string }
  | { kind: 'event'; requestId: string }
  | { kind: 'streamData'; identifier: string }
  | { kind: 'gateway'; message: GatewayUplinkKind };

/** Classify an un-prefixed topic a device published; undefined means not accepted. */
export function classifyUplink(topic: string): UplinkTopic | undefined {
  const gateway = classifyGatewayUplink(topic);
  if (gateway !== undefined) return { kind: 'gateway', message: gateway };
  const levels = topic.split('/');
  if (levels.some((level) => level.length === 0)) return undefined;
  const [first, second, third] = levels;
  if (levels.length === 1 && first === 'attributes') return { kind: 'report' };
  if (levels.length === 2 && first === 'data') return { kind: 'streamData', identifier: second };
  if (levels.length !== 3) return undefined;
  if (first === 'attributes' && second === 'get') return { kind: 'attributesGet', requestId: third };
  if (first === 'command' && second === 'reply') return { kind: 'commandReply', requestId: third };
  if (first === 'event' && second === 'report') return { kind: 'event', requestId: third };
  return undefined;
}

/** Topic on which the cloud answers an uplink, if it answers at all. */
export function responseTopic(uplink: UplinkTopic): string | undefined {
  switch (uplink.kind) {
    case 'report':
      return 'attributes/response';
    case 'attributesGet':
      return `attributes/get/response/${uplink.requestId}`;
    case 'commandReply':
      return `command/reply/response/${uplink.requestId}`;
    case 'event':
      return `event/response/${uplink.requestId}`;
    case 'streamData':
      return undefined;
    case 'gateway':
      return gatewayResponseTopic(uplink.message);
  }
}
