// The interface-B sync against the emulator, with no MQTT link at all: its credential comes from
// the credential service (here through interface A), so it runs before any broker connect.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProjectApiClient } from '../../../src/cloud/http/project-api.js';
import { CredentialResolver, CredentialStore } from '../../../src/cloud/credentials/credentials.js';
import { DeviceApiClient } from '../../../src/cloud/http/device-api.js';
import { HttpClient } from '../../../src/cloud/http/http-client.js';
import { RateQueue } from '../../../src/cloud/http/rate-queue.js';
import { systemTimers } from '../../../src/core/time.js';
import { CloudValueSync } from '../../../src/device/cloud-value-sync.js';
import { startEmulator, type Emulator } from '../../../packages/emulator/src/index.js';
import { parseSeed } from '../../../packages/emulator/src/state/seed.js';
import { silentLogger } from '../../../src/ops/log.js';
import { captureLogger } from '../../helpers/capture-logger.js';

const TOKEN = 'demo-meter-3-token';

/** Records what the sync applies; holds what the device is said to hold. */
class RecordingValues {
  readonly applied: Array<{ values: Record<string, unknown>; source: string }> = [];
  constructor(private readonly holding: Record<string, unknown>) {}
  async apply(values: Record<string, unknown>, source: string): Promise<void> {
    this.applied.push({ values, source });
  }
  held(): Readonly<Record<string, unknown>> {
    return this.holding;
  }
}

describe('interface-B sync with no MQTT link', () => {
  let emulator: Emulator;
  let stateDir: string;
  let queue: RateQueue;
  beforeEach(async () => {
    const seed = parseSeed(readFileSync('config/emulator-seed.yaml', 'utf8'), Date.now());
    emulator = await startEmulator({ httpPort: 0, mqttPort: 0, tcpPort: 0, host: '127.0.0.1', seed, logger: silentLogger() });
    stateDir = mkdtempSync(join(tmpdir(), 'fg-sync-'));
    queue = new RateQueue({
      concurrency: 2, intervalCap: 50, intervalMs: 1000, maxPending: 100, attempts: 1,
      backoff: { initialMs: 10, maxMs: 50, jitter: 0 }, max429Retries: 0, lowRemaining: 0,
    });
  });
  afterEach(async () => {
    queue.close();
    await emulator.close();
    rmSync(stateDir, { recursive: true, force: true });
  });

  function syncFor(baseUrl: string, values: RecordingValues, log = silentLogger()) {
    const http = new HttpClient({ timeoutMs: 5000 });
    const projectApi = new ProjectApiClient({ baseUrl, appId: 'demo-app', accessKey: 'demo-access-key', secretKey: 'demo-secret-key', http, queue, log });
    const store = new CredentialStore(join(stateDir, 'credentials.json'));
    const credentials = new CredentialResolver({ store, log, projectApi });
    return new CloudValueSync({
      identity: { name: 'meter-3', deviceId: 'dev-meter-3' }, credentials, deviceApi: new DeviceApiClient({ baseUrl, http, queue }),
      writable: ['setpoint', 'pump', 'speed'], values, periodMs: 0, timers: systemTimers, log,
    });
  }

  it('reads the cloud values and applies only writable points the device does not hold', async () => {
    const base = `http://127.0.0.1:${emulator.httpPort}`;
    const stored = await fetch(`${base}/app/device/v1/${TOKEN}/attributes`, {
      method: 'POST', headers: { 'Content-Type': 'application/json', 'Project-Key': 'demo-project-key' },
      body: JSON.stringify({ setpoint: 42.5, pump: true, voltage: 999 }),
    });
    expect(((await stored.json()) as { result: number }).result).toBe(1);
    const values = new RecordingValues({ pump: true, setpoint: 21.5 });
    const sync = syncFor(base, values);
    await sync.sync('test');
    expect(sync.counters).toEqual({ syncs: 1, syncFailures: 0 });
    // pump is already held and voltage is read-only: only setpoint is applied.
    expect(values.applied).toEqual([{ values: { setpoint: 42.5 }, source: 'sync:test' }]);
    // The credential came through interface A and was kept for the next start.
    expect(readFileSync(join(stateDir, 'credentials.json'), 'utf8')).toContain(TOKEN);
  });

  it('a sync with no credential to be had (cloud unreachable) is counted and logged, never thrown, and applies nothing', async () => {
    const capture = captureLogger();
    const values = new RecordingValues({});
    const sync = syncFor('http://127.0.0.1:1', values, capture.logger);
    await sync.sync('test');
    expect(sync.counters).toEqual({ syncs: 0, syncFailures: 1 });
    expect(values.applied).toEqual([]);
    expect(capture.count('cloud attribute read failed')).toBe(1);
  });
});
