// The shipped unit file: hardening score and syntax, checked by systemd's own analyzer.
import { EXIT_CONFIG } from '../../../src/cli/io.js';
import { EXIT_STATE_LOCKED } from '../../../src/ops/state-lock.js';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnvFile } from '../../../src/core/env-file.js';
import { describe, expect, it } from 'vitest';
import { serviceNodeFlags } from '../../bench/northbound.js';

const UNIT = 'systemd/fieldgate.service';

describe('systemd/fieldgate.service', () => {
  it('rates <= 2.0 in systemd-analyze security --offline', () => {
    const out = execFileSync('systemd-analyze', ['security', '--offline=true', UNIT], { encoding: 'utf8' });
    const match = /Overall exposure level for fieldgate\.service: ([\d.]+)/.exec(out);
    expect(match).not.toBeNull();
    expect(Number(match?.[1])).toBeLessThanOrEqual(2.0);
  });

  it('passes systemd-analyze verify with no complaints', () => {
    // verify also checks that ExecStart's program exists: the unit names Debian's /usr/bin/node
    // (the source install, docs/install.md); a machine whose Node lives elsewhere (a fresh box
    // with Node in /usr/local/bin) verifies a copy that names this test's own Node instead.
    let unit = UNIT;
    let dir: string | undefined;
    if (!existsSync('/usr/bin/node')) {
      dir = mkdtempSync(join(tmpdir(), 'fg-unit-'));
      unit = join(dir, 'fieldgate.service');
      writeFileSync(unit, readFileSync(UNIT, 'utf8').replaceAll('/usr/bin/node', process.execPath));
    }
    try {
      const run = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8' });
      expect(run.status).toBe(0);
      expect(`${run.stdout}${run.stderr}`.trim()).toBe('');
    } finally {
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is a notify service that never gives up, except on a site file it refuses (exit 78)', () => {
    const text = readFileSync(UNIT, 'utf8');
    expect(text).toMatch(/^Type=notify$/m);
    expect(text).toMatch(new RegExp(`^RestartPreventExitStatus=${EXIT_CONFIG}$`, 'm'));
    // A state directory another fieldgate holds is retried: the holder may go away.
    expect(text).not.toMatch(new RegExp(`^RestartPreventExitStatus=.*\\b${EXIT_STATE_LOCKED}\\b`, 'm'));
    expect(text).toMatch(/^Restart=on-failure$/m);
    // No start limit: an unattended box keeps retrying (systemd 252 has no RestartSteps=).
    expect(text).toMatch(/^StartLimitIntervalSec=0$/m);
    expect(text).not.toMatch(/^StartLimitBurst=/m);
    expect(text).toMatch(/^RestartSec=30s$/m);
    expect(text).toMatch(/^WatchdogSec=/m);
    expect(text).toMatch(/^SupplementaryGroups=dialout$/m);
  });

  it('has start and stop timeouts that cover quick_check of the largest outbox and the longest drain plus reload settle', () => {
    const text = readFileSync(UNIT, 'utf8');
    const seconds = (key: string) => {
      const m = new RegExp(`^${key}=(\\d+)(min|s)$`, 'm').exec(text);
      return m ? Number(m[1]) * (m[2] === 'min' ? 60 : 1) : Number.NaN;
    };
    // cloud.outbox.maxBytes at most 8 GiB read at 10 MB/s; cloud.drainMs at most 60 s, twice, + closing.
    expect(seconds('TimeoutStartSec')).toBeGreaterThanOrEqual((8 * 1024 ** 3) / 10e6);
    expect(seconds('TimeoutStopSec')).toBeGreaterThanOrEqual(2 * 60 + 20);
  });

  it('reads the service variables from one file the fieldgate command reads too, and publishes the health port in its runtime directory', () => {
    const text = readFileSync(UNIT, 'utf8');
    expect(text).not.toMatch(/^Environment=/m);
    expect([...text.matchAll(/^EnvironmentFile=(.*)$/gm)].map((m) => m[1])).toEqual(['/opt/fieldgate/systemd/service.env', '-/etc/fieldgate/fieldgate.env']);
    const vars = parseEnvFile(readFileSync('systemd/service.env', 'utf8'));
    expect(vars).toMatchObject({ FIELDGATE_STATE_DIR: '/var/lib/fieldgate', FIELDGATE_CONFIG: '/etc/fieldgate/site.yaml', FIELDGATE_RUNTIME_DIR: '/run/fieldgate' });
    expect(text).toMatch(new RegExp(`^StateDirectory=${vars.FIELDGATE_STATE_DIR.replace('/var/lib/', '')}$`, 'm'));
    expect(text).toMatch(new RegExp(`^RuntimeDirectory=${vars.FIELDGATE_RUNTIME_DIR.replace('/run/', '')}$`, 'm'));
    expect(text).toMatch(/^RuntimeDirectoryMode=0755$/m);
    expect(text).toMatch(new RegExp(`run --config ${vars.FIELDGATE_CONFIG}$`, 'm'));
  });

  it('reloads through `fieldgate reload` (checks the file, waits for the answer) with the same site file and the daemon\'s PID', () => {
    const text = readFileSync(UNIT, 'utf8');
    const start = /^ExecStart=.*\bbin\/fieldgate\.js run --config (\S+)$/m.exec(text);
    const reload = /^ExecReload=\/usr\/bin\/node \S*bin\/fieldgate\.js reload --config (\S+) --pid \$MAINPID$/m.exec(text);
    expect(start).not.toBeNull();
    expect(reload).not.toBeNull();
    expect(reload?.[1]).toBe(start?.[1]);
  });

  it('runs node with the V8 memory flags, the same as the Docker image', () => {
    const flags = serviceNodeFlags(readFileSync(UNIT, 'utf8'));
    expect(flags).toEqual(expect.arrayContaining(['--optimize-for-size', '--v8-pool-size=1', '--single-threaded']));
    const entry = /^ENTRYPOINT (\[.*\])$/m.exec(readFileSync('Dockerfile.arm64', 'utf8'));
    expect(entry).not.toBeNull();
    expect(JSON.parse(entry?.[1] ?? '[]')).toEqual(['node', ...flags, '/opt/fieldgate/bin/fieldgate.js']);
  });
});
