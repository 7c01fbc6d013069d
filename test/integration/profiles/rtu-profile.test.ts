// A profile rehearsed over RS-485 without the hardware: `simulate --profile eastron-sdm630 --pty`,
// read by mbpoll (an independent master) and polled by fieldgate through `profile:` alone.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { simulateUntil } from '../../../packages/simulator/src/cli.js';
import { Capture, mbpoll } from '../simulator/sim-helpers.js';
import { runCli } from '../../helpers/run-cli.js';
import { waitFor } from '../../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'fieldgate-rtu-profile-'));
const stop = new AbortController();
afterAll(() => {
  stop.abort();
  rmSync(dir, { recursive: true, force: true });
});

describe('a profile over RTU', () => {
  it('serves eastron-sdm630 on a pty: mbpoll reads the float voltages, fieldgate polls every point', async () => {
    const stdout = new Capture();
    const done = simulateUntil(['--profile', 'eastron-sdm630', '--unit', '5', '--pty', '--baud', '19200', '--parity', 'none', '--log-level', 'silent'], { stdout, stderr: new Capture(), env: {} }, stop.signal);
    const master = (await waitFor(() => /connect the master to (\S+)/.exec(stdout.text) ?? undefined, { what: 'pty line' }))[1];

    // Independent of fieldgate's codec: input registers 0..3 as two floats, most significant word first (-B).
    const read = await mbpoll(['-m', 'rtu', '-b', '19200', '-P', 'none', '-a', '5', '-0', '-r', '0', '-c', '2', '-t', '3:float', '-B', master]);
    expect(read.code).toBe(0);
    expect([read.values.get(0), read.values.get(2)]).toEqual(['230.5', '230.75']);

    const site = join(dir, 'site.yaml');
    writeFileSync(site, `buses:\n  - { name: line, kind: rtu, path: ${master}, baudRate: 19200, parity: none }\ndevices:\n  - { name: meter, bus: line, unitId: 5, profile: eastron-sdm630 }\n`);
    const poll = await runCli(['poll', site, '--once', '--json']);
    expect(poll.err).toBe('');
    expect(poll.code).toBe(0);
    const sample = (JSON.parse(poll.out) as Record<string, { values: Record<string, unknown>; errors: unknown[] }>).meter;
    expect(sample.errors).toEqual([]);
    expect(Object.keys(sample.values)).toHaveLength(87);
    expect(sample.values).toMatchObject({ voltage_l1: 230.5, voltage_l2: 230.75, frequency: expect.any(Number), demand_period: expect.any(Number) });
    stop.abort();
    expect(await done).toBe(0);
  });
});
