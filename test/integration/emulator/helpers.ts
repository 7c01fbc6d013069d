// Shared set-up for the emulator's HTTP tests: a seeded emulator on loopback, a fake or real channel.
import { readFileSync } from 'node:fs';
import type { DeviceChannel, DeviceChannelOptions, DeviceChannelStats } from '../../../packages/emulator/src/channel.js';
import type { Clock } from '../../../src/core/time.js';
import { startEmulator, type Emulator } from '../../../packages/emulator/src/index.js';
import type { RateLimitConfig } from '../../../packages/emulator/src/http/rate-limit.js';
import type { AppSideOptions } from '../../../packages/emulator/src/appside/index.js';
import type { JsonLimits } from '../../../packages/emulator/src/json-limits.js';
import { parseSeed } from '../../../packages/emulator/src/state/seed.js';
import { silentLogger } from '../../../src/ops/log.js';

export const SEED_PATH = new URL('../../../config/emulator-seed.yaml', import.meta.url);
export const PROJECT_KEY = 'demo-project-key';
export const APP = { app_id: 'demo-app', access_key: 'demo-access-key', secret_key: 'demo-secret-key' };

/** Records what the state asked the channel to deliver; devices are "online" when listed. */
export class FakeChannel implements DeviceChannel {
  readonly published: { deviceId: string; topic: string; payload: Buffer }[] = [];
  readonly tcpSent: { deviceId: string; data: Buffer }[] = [];
  readonly online = new Set<string>();
  readonly tcpDevices = new Set<string>();
  options: DeviceChannelOptions | undefined;
  readonly mqttPort = 0;
  readonly tcpPort = 0;
  async publish(deviceId: string, topic: string, payload: Buffer): Promise<boolean> {
    if (!this.online.has(deviceId)) return false;
    this.published.push({ deviceId, topic, payload });
    return true;
  }
  sendTcp(deviceId: string, data: Buffer): boolean {
    if (!this.tcpDevices.has(deviceId)) return false;
    this.tcpSent.push({ deviceId, data });
    return true;
  }
  isOnline(deviceId: string): boolean {
    return this.online.has(deviceId);
  }
  stats(): DeviceChannelStats {
    return { packetsTooLarge: 0 };
  }
  async close(): Promise<void> {}
}

export interface TestEmulator {
  emu: Emulator;
  base: string;
  channel: FakeChannel | undefined;
  /** An interface A token from the exchange operation. */
  token(): Promise<string>;
  /** Interface A call with the token; returns status, headers and the parsed body. */
  api(method: string, path: string, body?: unknown, token?: string): Promise<Reply>;
  /** Interface B call with the project key. */
  app(method: string, path: string, body?: unknown, projectKey?: string): Promise<Reply>;
}

export interface Reply {
  status: number;
  headers: Headers;
  // Tests read arbitrary response fields.
  body: Record<string, any>;
}

export async function request(base: string, method: string, path: string, body: unknown, headers: Record<string, string>): Promise<Reply> {
  const res = await fetch(base + path, {
    method, headers: { 'Content-Type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Reply['body'] };
}

export interface StartOptions {
  realChannel?: boolean;
  clock?: Clock;
  rateLimit?: RateLimitConfig;
  syncReplyTimeoutMs?: number;
  seedText?: string;
  jsonLimits?: Partial<JsonLimits>;
  /** Also serve the app-side subscription (off when not given). */
  appSide?: AppSideOptions;
}

export async function startTestEmulator(options: StartOptions = {}): Promise<TestEmulator> {
  const now = options.clock?.now() ?? Date.now();
  const seed = parseSeed(options.seedText ?? readFileSync(SEED_PATH, 'utf8'), now);
  const channel = options.realChannel ? undefined : new FakeChannel();
  const emu = await startEmulator({
    httpPort: 0, mqttPort: 0, tcpPort: 0, seed, logger: silentLogger(), clock: options.clock,
    rateLimit: options.rateLimit ?? { limit: 100_000, windowS: 60 }, syncReplyTimeoutMs: options.syncReplyTimeoutMs,
    jsonLimits: options.jsonLimits, appSide: options.appSide,
    startChannel: channel ? async (opts) => { channel.options = opts; return channel; } : undefined,
  });
  const base = `http://127.0.0.1:${emu.httpPort}`;
  let cached: string | undefined;
  const token = async () => {
    cached ??= (await request(base, 'POST', '/api/v1/access_token', APP, {})).body.info.access_token as string;
    return cached;
  };
  return {
    emu, base, channel, token,
    api: async (method, path, body, tok) => request(base, method, path, body, { Authorization: `Bearer ${tok ?? (await token())}` }),
    app: (method, path, body, projectKey = PROJECT_KEY) => request(base, method, path, body, { 'Project-Key': projectKey }),
  };
}

/** Polls `condition` until true (for hooks, where expect.poll is not available). */
export async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
