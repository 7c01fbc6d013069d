// The whole gateway (in process) polling the project's simulator on an RTU line (socat pty pair)
// with a share in front of the bus: independent masters read the simulator's values, cache answers
// need no request on the line (counted at the simulator), /status and `fieldgate status` show the
// share, and reloads change it on its own: a device added keeps the share's clients, a changed
// share block restarts only the share; a forwarded write reads back the point it covers.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseSimMap, startSimulation } from '../../../packages/simulator/src/index.js';
import { formatStatus } from '../../../src/cli/status.js';
import { startGateway, type GatewayHandle } from '../../../src/main.js';
import { silentLogger } from '../../../src/ops/log.js';
import { loadConfigWithDigest } from '../../../src/ops/site-file.js';
import { readSiteFile } from '../../../src/ops/site-file-reader.js';
import { createNotifier } from '../../../src/ops/systemd.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { freePort } from '../../helpers/mosquitto.js';
import { mbap, mbpollHolding, pymodbusRequests, rawClient } from '../../helpers/share-clients.js';
import { startPtyPair } from '../../helpers/socat.js';
import { waitFor } from '../../helpers/wait.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const VALUES = [11, 22, 33, 44, 55, 66, 77, 88];

function siteText(dir: string, line: string, sharePort: number, units: number[], share = 'cacheMs: 60s'): string {
  const devices = units.map((unit) => `  - name: m${unit}\n    bus: line\n    unitId: ${unit}\n    pollIntervalMs: 500\n    points: [{ id: a, table: holding, address: 0 }, { id: b, table: holding, address: 7 }]\n`).join('');
  return `gateway:\n  stateDir: ${join(dir, 'state')}\n  logLevel: debug\n  health: { enabled: false }\nbuses:\n  - name: line\n    kind: rtu\n    path: ${line}\n    timeoutMs: 500\n    share: { port: ${sharePort}, ${share} }\ndevices:\n${devices}`;
}

describe('a share in front of a polled RTU line (whole gateway)', () => {
  it('serves the simulator\'s values, answers from the poll without the line, reads back the point a forwarded write changed, and survives reloads of other parts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fieldgate-share-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const pair = await startPtyPair();
    cleanups.push(() => pair.stop());
    const map = parseSimMap(`units:\n  1:\n    holding: [{ start: 0, values: [${VALUES.join(', ')}] }]\n  2:\n    holding: [{ start: 0, values: [${VALUES.map((v) => v + 100).join(', ')}] }]\n`);
    if (!map.ok) throw new Error(map.problems.join('; '));
    const sim = await startSimulation({ map: map.map, logger: silentLogger(), rtu: { path: pair.b } });
    cleanups.push(() => sim.close());
    const port = await freePort();
    const site = join(dir, 'site.yaml');
    writeFileSync(site, siteText(dir, pair.a, port, [1]));
    const log = captureLogger();
    const loaded = loadConfigWithDigest(site, {});
    const g: GatewayHandle = await startGateway(loaded.config, { logger: log.logger, env: {}, configSha256: loaded.sha256, notifier: createNotifier({}, silentLogger()) });
    cleanups.push(() => g.stop());
    await waitFor(() => g.latestValues('m1').b === 88, { what: 'm1 polled', timeoutMs: 20_000 }).catch((err: unknown) => { throw new Error(JSON.stringify(log.lines().slice(-15)), { cause: err }); });

    // Cache answers: every request the simulator saw is one the bus made for the poller.
    const requestsBefore = sim.simulator.counters(1).requests;
    const transactionsBefore = g.status().buses[0]!.transactions;
    const mbpoll = await mbpollHolding(port, 1, 0, 8);
    expect(mbpoll.values, mbpoll.output).toEqual(VALUES);
    expect(await pymodbusRequests(port, [{ fc: 3, unit: 1, address: 2, count: 3 }])).toEqual([{ registers: [33, 44, 55] }]);
    const share = g.status().shares![0]!;
    expect(share).toMatchObject({ bus: 'line', listen: `127.0.0.1:${port}`, state: 'listening', forwarded: 0, fromCache: 2 });
    expect(sim.simulator.counters(1).requests - requestsBefore).toBe(g.status().buses[0]!.transactions - transactionsBefore);
    expect(formatStatus(g.status())).toMatch(new RegExp(`line\\s+127\\.0\\.0\\.1:${port}\\s+listening`));

    // A device added by a reload: the share keeps its client, and the new unit is reachable through it.
    const client = await rawClient(port);
    writeFileSync(site, siteText(dir, pair.a, port, [1, 2]));
    expect(await g.reload(() => readSiteFile(site, {}))).toMatchObject({ outcome: 'applied' });
    client.socket.write(mbap(7, 2, [3, 0, 0, 0, 2]));
    await waitFor(() => client.received().length >= 13, { what: 'answer from unit 2 on the same connection', timeoutMs: 10_000 });
    expect([...client.received().subarray(7, 13)]).toEqual([3, 4, 0, 111, 0, 122]);

    // A changed share block: only the share restarts (its clients are closed), the bus keeps running.
    const transactions = g.status().buses[0]!.transactions;
    writeFileSync(site, siteText(dir, pair.a, port, [1, 2], 'cacheMs: 0, access: read-write'));
    expect(await g.reload(() => readSiteFile(site, {}))).toMatchObject({ outcome: 'applied' });
    await client.closed;
    await waitFor(() => g.status().shares?.[0]?.state === 'listening' && g.status().shares?.[0]?.requests === 0, { what: 'the share restarted' });
    expect(await pymodbusRequests(port, [{ fc: 3, unit: 2, address: 7, count: 1 }])).toEqual([{ registers: [188] }]);
    expect(g.status().shares![0]).toMatchObject({ forwarded: 1, fromCache: 0 });
    expect(g.status().buses[0]!.transactions).toBeGreaterThan(transactions);
    expect(log.count('bus stopped')).toBe(0);

    // A forwarded write to a register a point covers: that point (only) is read back and reported.
    expect(await pymodbusRequests(port, [{ fc: 6, unit: 1, address: 7, values: [999] }])).toEqual([{ ok: true }]);
    await waitFor(() => log.lines().find((l) => l.msg === 'share write read back'), { what: 'read-back of point b', timeoutMs: 10_000 });
    expect(log.lines().filter((l) => l.msg === 'share write read back')).toEqual([expect.objectContaining({ device: 'm1', points: ['b'], unread: [] })]);
    await waitFor(() => g.latestValues('m1').b === 999, { what: 'point b reported', timeoutMs: 10_000 });
    expect(sim.simulator.getRegisters(1, 'holding', 7, 1)).toEqual([999]);
  }, 90_000);
});
