// The shipped unit file: hardening score and syntax, checked by systemd's own analyzer.
import { EXIT_CONFIG } from '../../../src/cli/io.js';
import { EXIT_STATE_LOCKED } from '../../../src/ops/state-lock.js';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
    const run = spawnSync('systemd-analyze', ['verify', UNIT], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(`${run.stdout}${run.stderr}`.trim()).toBe('');
  });

  it('is a notify service that does not restart-loop on config errors (exit 78) or a state directory in use (exit 73)', () => {
    const text = readFileSync(UNIT, 'utf8');
    expect(text).toMatch(/^Type=notify$/m);
    expect(text).toMatch(new RegExp(`^RestartPreventExitStatus=${EXIT_CONFIG} ${EXIT_STATE_LOCKED}$`, 'm'));
    expect(text).toMatch(/^Restart=on-failure$/m);
    expect(text).toMatch(/^WatchdogSec=/m);
    expect(text).toMatch(/^SupplementaryGroups=dialout$/m);
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
