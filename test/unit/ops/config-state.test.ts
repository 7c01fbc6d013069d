// ConfigState: generation and refusals as status shows them, and the state file `fieldgate reload`
// reads (written whole, never half), removed on stop only when it is still this process's.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asEpoch } from '../../../src/core/time.js';
import { CONFIG_STATE_FILE, ConfigState, type ConfigStateFile } from '../../../src/ops/config-state.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fg-config-state-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const file = () => JSON.parse(readFileSync(join(dir, CONFIG_STATE_FILE), 'utf8')) as ConfigStateFile;

describe('ConfigState', () => {
  it('counts generations and reloads; a refusal or a failure keeps the running digest and says why', () => {
    const errors: unknown[] = [];
    const state = new ConfigState(dir, 'aaa', asEpoch(Date.UTC(2026, 0, 1)), 4242, (err) => errors.push(err));
    expect(file()).toMatchObject({ pid: 4242, attempt: 0, outcome: 'started', generation: 1, sha256: 'aaa', lastError: null, problems: [] });

    state.record('applied', asEpoch(Date.UTC(2026, 0, 2)), 'bbb');
    state.record('unchanged', asEpoch(Date.UTC(2026, 0, 3)), 'ccc');
    expect(state.status()).toEqual({ generation: 2, sha256: 'ccc', loadedAt: '2026-01-02T00:00:00.000Z', lastError: null, reloads: { applied: 1, unchanged: 1, refused: 0, failed: 0 } });

    const problems = [{ path: 'gateway.stateDir', message: 'cannot change while fieldgate runs' }, { path: 'site.yaml:3:1', message: 'YAML syntax error' }];
    state.record('refused', asEpoch(Date.UTC(2026, 0, 4)), 'ddd', problems);
    expect(state.status()).toMatchObject({ generation: 2, sha256: 'ccc', lastError: '2 problem(s): gateway.stateDir: cannot change while fieldgate runs; site.yaml:3:1: YAML syntax error' });
    expect(file()).toMatchObject({ attempt: 3, outcome: 'refused', problems });

    state.record('applied', asEpoch(Date.UTC(2026, 0, 5)), 'eee');
    expect(state.status()).toMatchObject({ generation: 3, sha256: 'eee', lastError: null, reloads: { applied: 2, unchanged: 1, refused: 1 } });
    // Applying failed and was rolled back: generation and digest stay those running, the reason is kept.
    state.record('failed', asEpoch(Date.UTC(2026, 0, 6)), 'fff', [{ path: 'reload', message: 'reload failed while applying, rolled back: boom' }]);
    expect(state.status()).toMatchObject({ generation: 3, sha256: 'eee', lastError: '1 problem(s): reload: reload failed while applying, rolled back: boom', reloads: { applied: 2, unchanged: 1, refused: 1, failed: 1 } });
    expect(file()).toMatchObject({ attempt: 5, outcome: 'failed', generation: 3, sha256: 'eee' });
    expect(errors).toEqual([]);
  });

  it('removes the file on stop only while it is still its own', () => {
    const state = new ConfigState(dir, 'aaa', asEpoch(0), 4242, () => undefined);
    state.remove();
    expect(existsSync(join(dir, CONFIG_STATE_FILE))).toBe(false);
    const other = new ConfigState(dir, 'aaa', asEpoch(0), 4242, () => undefined);
    writeFileSync(join(dir, CONFIG_STATE_FILE), JSON.stringify({ pid: 777 }));
    other.remove();
    expect(file().pid).toBe(777);
  });

  it('a state file it cannot write (its directory is gone) is reported, not thrown, and status goes on', () => {
    const errors: unknown[] = [];
    const state = new ConfigState(join(dir, 'missing'), 'aaa', asEpoch(0), 1, (err) => errors.push(err));
    state.record('applied', asEpoch(1), 'bbb');
    expect(errors).toHaveLength(2);
    expect(state.status().generation).toBe(2);
  });
});
