// MQTT 3.1.1 §3.3.5: a message matching several subscriptions of one client is delivered at the
// maximum QoS of those subscriptions. aedes 1.2.0 hands the message to each matching
// subscription's handler (deliver0 for QoS 0, deliverQoS for QoS 1/2) and its per-client
// de-duplication (`client.duplicates`, by broker counter) lets only the FIRST handler write: with
// `#` at QoS 0 and `attributes/response` at QoS 1 the QoS 0 handler often runs first and the
// device gets one QoS 0 copy. The fix sits at that depth: a client's deliver0 upgrades to
// deliverQoS when any of its subscriptions matching the topic asks for QoS > 0, so whichever
// handler wins, the single copy goes out at the maximum QoS (capped by the publish QoS, always 1
// here). One copy per message stays: §3.3.5 allows, but does not require, further copies.
import type { Client } from 'aedes';

interface DeliverablePacket {
  topic: string;
  qos: number;
}
type Deliver = (packet: DeliverablePacket, done: () => void) => void;

/** aedes keeps these on the client object (lib/client.js); they are not in its typings. */
interface DeliveringClient {
  deliver0: Deliver;
  deliverQoS: Deliver;
  subscriptions: Record<string, { qos: number }>;
}

/** MQTT 3.1.1 §4.7 matching; a wildcard first level never matches a `$` topic. */
export function topicMatches(filter: string, topic: string): boolean {
  const f = filter.split('/');
  const t = topic.split('/');
  if (topic.startsWith('$') && (f[0] === '#' || f[0] === '+')) return false;
  for (let i = 0; i < f.length; i += 1) {
    if (f[i] === '#') return true;
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}

export function maxMatchingQos(subscriptions: Record<string, { qos: number }>, topic: string): number {
  let max = 0;
  for (const [filter, sub] of Object.entries(subscriptions)) {
    if (sub.qos > max && topicMatches(filter, topic)) max = sub.qos;
  }
  return max;
}

/** Call right after `aedes.handle()`, before any subscription captures `client.deliver0`. */
export function deliverAtMaxQos(client: Client): void {
  const c = client as unknown as Partial<DeliveringClient>;
  const { deliver0, deliverQoS } = c;
  if (typeof deliver0 !== 'function' || typeof deliverQoS !== 'function' || typeof c.subscriptions !== 'object') {
    throw new Error('aedes client has no deliver0/deliverQoS/subscriptions: delivery QoS cannot be fixed');
  }
  c.deliver0 = (packet, done) => {
    if (packet.qos > 0 && maxMatchingQos(c.subscriptions ?? {}, packet.topic) > 0) deliverQoS(packet, done);
    else deliver0(packet, done);
  };
}
