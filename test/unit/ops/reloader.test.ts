// The reloader (orchestrator) with fakes: RELOADING before and READY after every attempt, one
// error line per refusal, nothing touched when refused or unchanged, reloads one at a time, the
// apply order that loses nothing (polling stops before the cloud side hands over, buses before devices).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Config } from '../../../src/core/config/config.js';
import { asEpoch, systemTime } from '../../../src/core/time.js';
import type { CommandService } from '../../../src/device/commands.js';
import type { Reporter } from '../../../src/device/reporter.js';
import type { CloudSide } from '../../../src/ops/cloud-side.js';
import { ConfigState } from '../../../src/ops/config-state.js';
import type { ReloadCandidate } from '../../../src/ops/gateway-handle.js';
import { createReloader } from '../../../src/ops/reload.js';
import { checkConfig } from '../../../src/ops/site-file.js';
import type { Southbound } from '../../../src/ops/southbound.js';
import { WriteSequencers } from '../../../src/device/write-sequencer.js';
import type { Notifier } from '../../../src/ops/systemd.js';
import { captureLogger } from '../../helpers/capture-logger.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fg-reloader-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Devices by name ("name:periodMs" sets the poll period, "name:periodMs:token" a cloud link). */
function config(devices: string[], extra: Record<string, unknown> = {}): Config {
  const linked = devices.some((entry) => entry.split(':').length > 2);
  const raw = {
    gateway: { stateDir: dir, health: { enabled: false }, ...(linked ? { cloud: { mqttUrl: 'mqtt://127.0.0.1:1883', projectKey: 'pk' } } : {}), ...extra },
    buses: [{ name: 'a', kind: 'tcp', host: '127.0.0.1', port: 5020 }],
    devices: devices.map((entry, i) => {
      const [name, period, token] = entry.split(':');
      return {
        name, bus: 'a', unitId: i + 1, pollIntervalMs: Number(period ?? 1000), points: [{ id: 'p', table: 'holding', address: 0 }],
        ...(token ? { cloud: { accessToken: token } } : {}),
      };
    }),
  };
  const { config: loaded, issues } = checkConfig(raw, {});
  if (!loaded) throw new Error(JSON.stringify(issues));
  return loaded;
}

/** `failing`: calls (as recorded, e.g. "cloud+ new") that throw an injected error after being recorded. */
function rig(initial: Config, failing: readonly string[] = []) {
  const recorded: string[] = [];
  const calls = {
    push(call: string): number {
      recorded.push(call);
      if (failing.includes(call)) throw new Error(`injected: ${call}`);
      return recorded.length;
    },
  };
  const notifier: Notifier = {
    enabled: true, ready: (s) => calls.push(`READY ${s}`), status: () => undefined, watchdog: () => undefined, stopping: () => undefined, close: () => undefined,
    reloading: (_s, usec) => calls.push(`RELOADING ${typeof usec}`),
  };
  const southbound = {
    buses: new Map(), pollers: new Map(), kinds: new Map(), writeOrder: new WriteSequencers(),
    removeDevice: async (name: string) => void calls.push(`poll- ${name}`),
    addDevice: (d: { config: { name: string } }) => void calls.push(`poll+ ${d.config.name}`),
    removeBus: async (name: string) => void calls.push(`bus- ${name}`),
    addBus: (b: { name: string }) => void calls.push(`bus+ ${b.name}`),
  } as unknown as Southbound;
  const cloudSide = {
    removeDevice: async (name: string) => void calls.push(`cloud- ${name}`),
    addDevice: (d: { name: string }) => void calls.push(`cloud+ ${d.name}`),
    suspendDevice: async (name: string) => void calls.push(`cloud hold ${name}`),
    resumeDevice: (d: { name: string }) => void calls.push(`cloud resume ${d.name}`),
  } as unknown as CloudSide;
  const reporter = { removeDevice: (n: string) => calls.push(`report- ${n}`), addDevice: (d: { name: string }) => calls.push(`report+ ${d.name}`) } as unknown as Reporter;
  const log = captureLogger();
  const state = new ConfigState(dir, 'sha-1', asEpoch(0), 1, () => undefined);
  const levels: string[] = [];
  const reloader = createReloader({
    initial, state, notifier, logger: log.logger, time: systemTime, summary: () => 'summary',
    parts: { southbound, cloudSide, reporter, commands: new Map<string, CommandService>(), commandLog: log.logger, settleMs: 100, setLogLevel: (l) => levels.push(l),
      retiring: { outbox: { devicesWithBacklog: () => [] }, discard: () => 0, linkUp: () => false, sendMs: 100, time: systemTime, log: log.logger } },
    applied: (c) => calls.push(`applied ${c.site.devices.map((d) => d.name).join(',')}`),
  });
  return { calls: recorded, log, state, levels, reloader };
}

const candidate = (c: Config, sha256 = 'sha-2'): (() => ReloadCandidate) => () => ({ config: c, sha256, issues: [] });

describe('reloader', () => {
  it('refuses a broken file: RELOADING then READY, one error line with every problem, nothing touched', async () => {
    const { calls, log, state, reloader } = rig(config(['m1']));
    const problems = [{ path: 'site.yaml:2:1', message: 'YAML syntax error: x' }, { path: 'devices[0].unitId', message: 'must be 1..247' }];
    const result = await reloader.reload(() => ({ issues: problems }));
    expect(result).toEqual({ outcome: 'refused', generation: 1, problems });
    expect(calls).toEqual(['RELOADING bigint', 'READY summary']);
    expect(log.count('site file reload refused: nothing changed')).toBe(1);
    expect(log.lines().filter((l) => l.level === 50)).toEqual([expect.objectContaining({ problems: ['site.yaml:2:1: YAML syntax error: x', 'devices[0].unitId: must be 1..247'] })]);
    expect(state.status()).toMatchObject({ generation: 1, sha256: 'sha-1', lastError: expect.stringContaining('devices[0].unitId') });
  });

  it('refuses a changed fixed key whole, even with device changes in the same file', async () => {
    const { calls, reloader } = rig(config(['m1']));
    const result = await reloader.reload(candidate(config(['m1', 'm2'], { health: { enabled: true, port: 9999 } })));
    expect(result.outcome).toBe('refused');
    expect(result.problems.map((p) => p.path)).toEqual(['gateway.health.enabled', 'gateway.health.port']);
    expect(calls).toEqual(['RELOADING bigint', 'READY summary']);
  });

  it('an unchanged file is a no-op that still answers', async () => {
    const { calls, state, reloader } = rig(config(['m1']));
    expect(await reloader.reload(candidate(config(['m1'])))).toEqual({ outcome: 'unchanged', generation: 1, problems: [] });
    expect(calls).toEqual(['RELOADING bigint', 'READY summary']);
    expect(state.status()).toMatchObject({ generation: 1, sha256: 'sha-2', reloads: { unchanged: 1 } });
  });

  it('applies in an order that loses nothing, and only the difference', async () => {
    const { calls, levels, reloader } = rig(config(['keep', 'change', 'gone']));
    const result = await reloader.reload(candidate(config(['keep', 'change:500', 'new'], { logLevel: 'debug' })));
    expect(result).toEqual({ outcome: 'applied', generation: 2, problems: [] });
    expect(calls).toEqual([
      'RELOADING bigint',
      'poll- change', 'poll- gone', 'cloud- change', 'cloud- gone', 'report- change', 'report- gone',
      'report+ change', 'poll+ change', 'cloud+ change', 'report+ new', 'poll+ new', 'cloud+ new',
      'applied keep,change,new', 'READY summary',
    ]);
    expect(calls.filter((c) => !c.startsWith('applied')).join(' ')).not.toContain('keep');
    expect(levels).toEqual(['debug']);
    expect(reloader.current().site.devices.map((d) => d.name)).toEqual(['keep', 'change', 'new']);
  });

  it('a replaced device with the same identity keeps its cloud side: held while its polling stops, resumed by the replacement', async () => {
    const { calls, reloader } = rig(config(['same:1000:t1', 'relinked:1000:t2']));
    const result = await reloader.reload(candidate(config(['same:500:t1', 'relinked:500:t3'])));
    expect(result.outcome).toBe('applied');
    expect(calls).toEqual([
      'RELOADING bigint',
      'poll- same', 'cloud hold same', 'poll- relinked', 'report- same', 'cloud- relinked', 'report- relinked',
      'report+ same', 'poll+ same', 'cloud resume same', 'report+ relinked', 'poll+ relinked', 'cloud+ relinked',
      'applied same,relinked', 'READY summary',
    ]);
  });

  it('a failure part-way through applying is rolled back: every touched part restarted from the running config, outcome failed, one error line', async () => {
    const { calls, log, state, levels, reloader } = rig(config(['keep', 'change', 'gone']), ['cloud+ new']);
    const initial = reloader.current();
    const result = await reloader.reload(candidate(config(['keep', 'change:500', 'new'], { logLevel: 'debug' })));
    expect(result).toMatchObject({ outcome: 'failed', generation: 1, problems: [{ path: 'reload', message: 'reload failed while applying, rolled back: injected: cloud+ new' }] });
    expect(calls).toEqual([
      'RELOADING bigint',
      'poll- change', 'poll- gone', 'cloud- change', 'cloud- gone', 'report- change', 'report- gone',
      'report+ change', 'poll+ change', 'cloud+ change', 'report+ new', 'poll+ new', 'cloud+ new',
      // Rollback: whatever runs of the touched devices stops (new or old version), then the old versions start.
      'poll- gone', 'poll- change', 'poll- new', 'cloud- gone', 'cloud- change', 'cloud- new', 'report- gone', 'report- change', 'report- new',
      'report+ change', 'poll+ change', 'cloud+ change', 'report+ gone', 'poll+ gone', 'cloud+ gone',
      // Whoever follows the running config is told it again (the own device's commands).
      'applied keep,change,gone', 'READY summary',
    ]);
    expect(calls.filter((c) => !c.startsWith('applied')).join(' ')).not.toContain('keep');
    // The plan changed the log level too: the running one is set again.
    expect(levels).toEqual(['info']);
    expect(reloader.current()).toBe(initial);
    expect(state.status()).toMatchObject({ generation: 1, sha256: 'sha-1', lastError: expect.stringContaining('rolled back: injected: cloud+ new'), reloads: { failed: 1, applied: 0 } });
    expect(log.lines().filter((l) => Number(l.level) >= 50)).toEqual([expect.objectContaining({
      msg: 'site file reload failed: rolled back, the running config is unchanged', generation: 1, sha256: 'sha-2', added: ['new'], removed: ['gone'], replaced: ['change'],
    })]);
  });

  it('a failed rollback restores what it can, and is said once, at fatal level, with both errors: restart fieldgate', async () => {
    const { calls, log, state, reloader } = rig(config(['a', 'b']), ['report+ a']);
    const result = await reloader.reload(candidate(config(['a:500', 'b:500'])));
    expect(result.outcome).toBe('failed');
    expect(result.problems[0].message).toMatch(/could not be rolled back \(restart fieldgate\): injected: report\+ a; rollback: injected: report\+ a/);
    // b is restored although a could not be.
    expect(calls.slice(calls.lastIndexOf('report+ a'))).toEqual(['report+ a', 'report+ b', 'poll+ b', 'cloud+ b', 'applied a,b', 'READY summary']);
    expect(state.status().generation).toBe(1);
    expect(log.lines().filter((l) => Number(l.level) >= 50)).toEqual([expect.objectContaining({ level: 60, msg: 'site file reload failed and was not rolled back: restart fieldgate' })]);
  });

  it('runs reloads one at a time, in the order they came', async () => {
    const { calls, reloader } = rig(config(['m1']));
    let release: () => void = () => undefined;
    const slow = new Promise<void>((resolve) => { release = resolve; });
    const first = reloader.reload(async () => {
      await slow;
      return { config: config(['m1', 'm2']), sha256: 's2', issues: [] };
    });
    const second = reloader.reload(candidate(config(['m1']), 's3'));
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toEqual(['RELOADING bigint']);
    release();
    expect((await first).generation).toBe(2);
    expect((await second).generation).toBe(3);
    expect(calls.filter((c) => c.startsWith('RELOADING') || c.startsWith('READY'))).toEqual(['RELOADING bigint', 'READY summary', 'RELOADING bigint', 'READY summary']);
  });

  it('a fault while reading or applying is answered as a refusal on one line, never thrown', async () => {
    const { calls, log, reloader } = rig(config(['m1']));
    const result = await reloader.reload(() => {
      throw new Error('disk on fire');
    });
    expect(result).toMatchObject({ outcome: 'refused', problems: [{ path: 'reload', message: 'reload failed: disk on fire' }] });
    expect(log.lines().filter((l) => l.level === 50)).toHaveLength(1);
    expect(calls).toEqual(['RELOADING bigint', 'READY summary']);
  });
});
