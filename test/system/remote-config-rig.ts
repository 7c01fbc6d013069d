// Remote configuration rig: the emulator and simulated devices of harness.ts, a seed site file
// with fieldgate's identity, and the daemon in this process started the way `run` starts it (the
// generation store chosen by cli/site-generation-start.ts). Commands go through interface B's
// command/sync/send, as a cloud application sends them.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startingSite } from '../../src/cli/site-generation-start.js';
import { startGateway } from '../../src/main.js';
import type { GatewayHandle } from '../../src/ops/gateway-handle.js';
import type { Logger } from '../../src/core/logger.js';
import { silentLogger } from '../../src/ops/log.js';
import { readSiteForRun } from '../../src/cli/site-loading.js';
import { deviceApi, PROJECT_KEY, startSite, waitFor, type Site } from './harness.js';

export const OWN_TOKEN = 'demo-gateway-token';

export function meter(name: string, unit: number, token: string, pollMs = 300): string {
  return [`  - name: ${name}`, '    bus: plant', `    unitId: ${unit}`, `    pollIntervalMs: ${pollMs}`, `    cloud: { accessToken: ${token} }`,
    '    points:', '      - { id: voltage, table: input, address: 0, scale: 0.1 }'].join('\n');
}

/** The seed: identity on, the simulator's bus (`busPort` replaces its port: a bus that does not come up). */
export function seedText(site: Site, devices: string[], options: { busPort?: number; siteBlock?: string; webPort?: number } = {}): string {
  return [
    'gateway:', `  stateDir: ${site.stateDir}`, '  logLevel: info', '  health: { enabled: false }',
    ...(options.webPort === undefined ? [] : [`  web: { port: ${options.webPort}, allowReload: true }`]),
    '  cloud:', `    identity: { accessToken: ${OWN_TOKEN}, reportIntervalMs: 5000, minReportGapMs: 1000${options.siteBlock ? `, site: ${options.siteBlock}` : ''} }`,
    `    mqttUrl: mqtt://127.0.0.1:${site.emulator.mqttPort}`, `    apiBaseUrl: http://127.0.0.1:${site.emulator.httpPort}`, `    projectKey: ${PROJECT_KEY}`, '    syncPeriodMs: 0',
    '    reconnect: { initialMs: 100, maxMs: 1000, jitter: 0.1 }',
    'buses:', `  - { name: plant, kind: tcp, host: 127.0.0.1, port: ${options.busPort ?? site.sim.tcp?.port ?? 0}, timeoutMs: 500 }`,
    'devices:', ...devices, '',
  ].join('\n');
}

export class RemoteRig {
  gateway: GatewayHandle | undefined;
  private nextId = 100;

  private constructor(readonly site: Site, readonly seedFile: string) {}

  static async start(devices: string[] = [meter('meter-1', 1, 'demo-meter-1-token')], options: { jsonMaxBytes?: number; siteBlock?: string; webPort?: number } = {}): Promise<RemoteRig> {
    const site = await startSite(options.jsonMaxBytes ? { jsonMaxBytes: options.jsonMaxBytes } : {});
    const rig = new RemoteRig(site, join(site.stateDir, 'seed.yaml'));
    writeFileSync(rig.seedFile, seedText(site, devices, { ...(options.siteBlock ? { siteBlock: options.siteBlock } : {}), ...(options.webPort === undefined ? {} : { webPort: options.webPort }) }));
    await rig.startGateway();
    return rig;
  }

  /** As `run` starts: the seed read, the store's choice, the gateway with its site commands. */
  async startGateway(logger: Logger = silentLogger()): Promise<GatewayHandle> {
    const read = readSiteForRun(this.seedFile, {});
    if (!read.config) throw new Error(read.issues.map((i) => `${i.path}: ${i.message}`).join('; '));
    const loaded = startingSite(this.seedFile, { config: read.config, ...(read.sha256 ? { sha256: read.sha256 } : {}) }, {}, logger);
    this.gateway = await startGateway(loaded.config, {
      logger, env: {}, siteFile: this.seedFile, ...(loaded.sha256 ? { configSha256: loaded.sha256 } : {}), ...(loaded.generations ? { siteGenerations: loaded.generations } : {}),
    });
    // Commands are taken once the identity's link is up and subscribed.
    const gateway = this.gateway;
    await waitFor(() => (gateway.status().links.some((l) => l.device === '@fieldgate' && l.state === 'up') ? true : undefined), 20_000);
    return gateway;
  }

  async stopGateway(): Promise<void> {
    await this.gateway?.stop();
    this.gateway = undefined;
  }

  /** One command through command/sync/send: the reply's params (an error reply as `{error}`). */
  async command(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const reply = await deviceApi(this.site, OWN_TOKEN, 'POST', '/command/sync/send', { method, params, id });
    if (reply.result !== 1) throw new Error(`no reply to ${method}: ${JSON.stringify(reply)}`);
    return (reply.command as { params: Record<string, unknown> }).params;
  }

  /** The cloud's stored own attributes of fieldgate. */
  async ownAttributes(): Promise<Record<string, unknown>> {
    return ((await deviceApi(this.site, OWN_TOKEN, 'GET', '/attributes')).attributes ?? {}) as Record<string, unknown>;
  }

  async close(): Promise<void> {
    await this.stopGateway();
    await this.site.close();
  }
}
