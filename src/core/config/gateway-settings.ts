// The `gateway` section as convict returns it, and the GatewaySettings made of it (unset values left out).
import type { CloudSettings, GatewaySettings, LogLevel } from './site-types.js';
import { webFrom, type RawWeb } from './web-settings.js';

export type RawGateway = {
  stateDir: string;
  logLevel: LogLevel;
  profileDirs: string[];
  health: { enabled: boolean; host: string; port: number; eventLoopSampleMs: number; watchdogSlackMs: number };
  web: RawWeb;
  cloud: CloudSettings;
};

/** The identity block with unset strings left out; absent when it names no identity at all. */
function identityFrom(raw: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!raw) return undefined;
  const identity = Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== ''));
  const named = ['deviceId', 'deviceKey', 'accessToken', 'typeKey', 'projectKey'].some((key) => key in identity);
  return named || identity.allowCreate === true ? identity : undefined;
}

export function gatewayFrom(raw: RawGateway): GatewaySettings {
  // Unset strings ('') are left out so "not configured" reads as an absent key.
  const cloud: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw.cloud)) {
    if (value !== '') cloud[key] = value;
  }
  const identity = identityFrom(raw.cloud.identity as unknown as Record<string, unknown> | undefined);
  if (identity) cloud.identity = identity;
  else delete cloud.identity;
  const web = webFrom(raw.web);
  return {
    stateDir: raw.stateDir,
    logLevel: raw.logLevel,
    health: { enabled: raw.health.enabled, host: '127.0.0.1', port: raw.health.port, eventLoopSampleMs: raw.health.eventLoopSampleMs, watchdogSlackMs: raw.health.watchdogSlackMs },
    cloud: cloud as unknown as CloudSettings,
    profileDirs: [...raw.profileDirs],
    ...(web ? { web } : {}),
  };
}
