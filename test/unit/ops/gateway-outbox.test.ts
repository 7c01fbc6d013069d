// The gateway's outbox logging and counters: one line per loss event with the total and every
// device's count (not the first device's only), an "outbox full" episode summed at its end, and
// dropped counters that survive a restart (kept in the outbox's own file), a removed device's queue among them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { OutboxStore } from '../../../src/cloud/outbox/outbox-store.js';
import type { CloudSettings } from '../../../src/core/config/site-types.js';
import { openGatewayOutbox } from '../../../src/ops/gateway-outbox.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { ManualClock } from '../../helpers/manual-clock.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gateway-outbox-'));
});

afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

const settle = () => new Promise((resolve) => setImmediate(resolve));

function cloud(maxBytes: number, mode: 'memory-first' | 'write-ahead'): CloudSettings {
  return { outbox: { maxBytes, commitIntervalMs: 50, mode, durableAfterMs: 1000, storageRetryMs: 1000 } } as CloudSettings;
}

describe.each(['memory-first', 'write-ahead'] as const)('gateway outbox loss reporting (%s)', (mode) => {
  it('a stop whose last write fails logs one line with the total and each device\'s count', async () => {
    const log = captureLogger();
    const store = openGatewayOutbox(dir, cloud(1_000_000, mode), log.logger, () => undefined, new ManualClock());
    const counts = { pump: 5, meter: 3, valve: 1 };
    for (const [device, n] of Object.entries(counts)) for (let i = 0; i < n; i += 1) store.outbox.append(device, `${device}-${i}`, i);
    vi.spyOn(OutboxStore.prototype, 'transaction').mockImplementation(() => {
      throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' });
    });
    store.outbox.close();
    await settle();
    const lines = log.lines().filter((l) => l.msg === 'outbox reports lost');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ reason: 'write-failed', total: 9, byDevice: counts });
  });

  it('an "outbox full" episode: one line as it starts, its total per device when it ends, and the counters survive a restart', async () => {
    const log = captureLogger();
    const clock = new ManualClock();
    const store = openGatewayOutbox(dir, cloud(200, mode), log.logger, () => undefined, clock);
    // Two devices, 10-byte reports, 600 bytes for a 200-byte cap.
    for (let i = 0; i < 30; i += 1) {
      store.outbox.append('fast', `fast-${String(i).padStart(5, '0')}`, i);
      if (i % 3 === 0) store.outbox.append('slow', `slow-${String(i).padStart(5, '0')}`, i);
      store.outbox.flush();
    }
    const dropped = store.status(clock.now()).droppedByDevice ?? {};
    const total = Object.values(dropped).reduce((n, d) => n + d, 0);
    expect(total).toBeGreaterThan(0);
    store.resetFullWarning();
    store.resetFullWarning();
    await settle();
    expect(log.count('outbox full: dropping oldest reports')).toBe(1);
    const over = log.lines().filter((l) => l.msg === 'outbox drop episode over');
    expect(over).toHaveLength(1);
    expect(over[0]).toMatchObject({ total, byDevice: dropped });
    store.outbox.close();

    const again = openGatewayOutbox(dir, cloud(200, mode), captureLogger().logger, () => undefined, clock);
    expect(again.status(clock.now())).toMatchObject({ dropped: total, droppedByDevice: dropped });
    again.outbox.close();
  });

  it('a removed device\'s queue: counted in /status and in the loss line (device-removed), and after a restart', async () => {
    const log = captureLogger();
    const clock = new ManualClock();
    const store = openGatewayOutbox(dir, cloud(1_000_000, mode), log.logger, () => undefined, clock);
    for (let i = 0; i < 8; i += 1) store.outbox.append('gone', `gone-${i}`, i);
    store.outbox.flush();
    for (let i = 0; i < 3; i += 1) store.outbox.append('gone', `late-${i}`, 10 + i);
    store.outbox.append('kept', 'kept-0', 0);
    expect(store.discard('gone')).toBe(11);
    expect(store.discard('gone')).toBe(0);
    await settle();
    expect(store.status(clock.now())).toMatchObject({ depth: 1, dropped: 11, droppedByDevice: { gone: 11 } });
    expect(log.lines().filter((l) => l.msg === 'outbox reports lost')).toEqual([expect.objectContaining({ level: 40, reason: 'device-removed', total: 11, byDevice: { gone: 11 } })]);
    store.outbox.close();

    const again = openGatewayOutbox(dir, cloud(1_000_000, mode), captureLogger().logger, () => undefined, clock);
    expect(again.status(clock.now())).toMatchObject({ depth: 1, dropped: 11, droppedByDevice: { gone: 11 } });
    expect(again.outbox.peek('gone', 50)).toEqual([]);
    again.outbox.close();
  });
});
