// A dashboard of its own on the app side (the demo's): connects as the cloud's documentation
// says (view key and secret, `<key>/+/<kind>` at QoS 0) and counts what arrives per kind.
import mqtt, { type MqttClient } from 'mqtt';
import { APP_KINDS, type AppKind } from './topics.js';

export interface AppWatchSummary {
  /** Messages received per kind, and the latest of each as a short line. */
  counts: Record<AppKind, number>;
  latest: Partial<Record<AppKind, string>>;
  connected: boolean;
  error: string | undefined;
}

export interface AppWatch {
  /** Settles once the first subscription is answered, or with the first connection error: a caller that waits for it misses no message sent afterwards. */
  ready: Promise<void>;
  summary(): AppWatchSummary;
  close(): Promise<void>;
}

function describe(kind: AppKind, body: Record<string, unknown>): string {
  const device = (body.device as { name?: string } | undefined)?.name ?? '?';
  const detail = kind === 'attributes' ? `${String(body.source)} ${Object.keys((body.attributes as object | undefined) ?? {}).join(',')}`
    : kind === 'event' ? String((body.event as { method?: string } | undefined)?.method)
      : kind === 'command_reply' ? String((body.command as { method?: string } | undefined)?.method)
        : kind === 'data' ? String((body.data as { identifier?: string } | undefined)?.identifier)
          : body.online === true ? 'online' : 'offline';
  return `${device}: ${detail}`;
}

/** `url` such as `ws://127.0.0.1:18083/mqtt`; never throws: a failure shows in the summary. */
export function watchAppSide(url: string, viewKey: string, viewSecret: string): AppWatch {
  const counts = Object.fromEntries(APP_KINDS.map((k) => [k, 0])) as Record<AppKind, number>;
  const latest: Partial<Record<AppKind, string>> = {};
  let error: string | undefined;
  let settle: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => { settle = resolve; });
  const client: MqttClient = mqtt.connect(url, { username: viewKey, password: viewSecret, protocolVersion: 4, reconnectPeriod: 1000 });
  client.on('connect', () => {
    error = undefined;
    client.subscribe(APP_KINDS.map((kind) => `${viewKey}/+/${kind}`), { qos: 0 }, (err) => {
      if (err) error = err.message;
      settle();
    });
  });
  client.on('error', (err) => {
    error = err.message;
    settle();
  });
  client.on('message', (topic, payload) => {
    const kind = topic.split('/')[2] as AppKind;
    if (!(kind in counts)) return;
    counts[kind] += 1;
    try {
      latest[kind] = describe(kind, JSON.parse(payload.toString('utf8')) as Record<string, unknown>);
    } catch {
      latest[kind] = 'not JSON';
    }
  });
  return {
    ready,
    summary: () => ({ counts: { ...counts }, latest: { ...latest }, connected: client.connected, error }),
    close: () => new Promise((resolve) => client.end(true, {}, () => resolve())),
  };
}
