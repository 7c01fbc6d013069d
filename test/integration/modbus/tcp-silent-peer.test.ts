// A Modbus TCP peer that accepts connections but answers nothing for a while, then answers again
// (issue 28: the units' values came back 38.5 s after it did). While no unit of the bus answers,
// the units' cool-down probes do not back off (the silence is the peer's, and probing costs no
// neighbour anything); the first unit back brings the others back at their next request.
import { afterEach, describe, expect, it } from 'vitest';
import { compileDevice } from '../../../src/core/config/compile.js';
import { Bus } from '../../../src/field/modbus/bus.js';
import { createModbusTransport } from '../../../src/field/modbus/transport.js';
import { Poller, type Sample } from '../../../src/device/poller.js';
import { silentLogger } from '../../../src/ops/log.js';
import { tcpBusConfig } from '../../helpers/bus-configs.js';
import { deviceConfig, pointConfig } from '../../helpers/device-configs.js';
import { startHostileTcpPeer, truth } from '../../helpers/hostile-modbus.js';
import { waitFor } from '../../helpers/wait.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a TCP peer that accepts and never answers, then answers again', () => {
  it('keeps probing every cool-down period while silent, and both units report again together', async () => {
    const peer = await startHostileTcpPeer({ healthyUnit: 1, hostileUnit: 2, timeoutMs: 200 });
    cleanups.push(() => peer.stop());
    const cooldown = { afterTimeouts: 2, initialMs: 1_000, maxMs: 16_000 };
    const bus = new Bus({
      config: tcpBusConfig({ port: Number(peer.endpoint), timeoutMs: 200, cooldown, reopenAfterSilenceMs: 3_000 }),
      transportFactory: createModbusTransport, logger: silentLogger(),
    });
    cleanups.push(() => bus.stop());
    bus.start();
    const points = [0, 1].map((address) => pointConfig({ id: `r${address}`, address }));
    const samples: Sample[] = [];
    let wrongValues = 0;
    const poller = new Poller({
      bus,
      devices: [deviceConfig({ name: 'a', unitId: 1, pollIntervalMs: 250, points }), deviceConfig({ name: 'b', unitId: 2, pollIntervalMs: 250, points })]
        .map(compileDevice),
      sink: {
        onSample: (sample) => {
          for (const [id, value] of Object.entries(sample.values)) if (value !== truth(sample.device === 'a' ? 1 : 2, Number(id.slice(1)))) wrongValues += 1;
          samples.push(sample);
        },
        onDeviceState: () => undefined,
      },
      logger: silentLogger(),
    });
    cleanups.push(() => poller.stop());
    poller.start();
    await waitFor(() => samples.some((s) => s.device === 'a') && samples.some((s) => s.device === 'b'), { what: 'both units read' });

    peer.muted = true;
    await waitFor(() => bus.unitState(1).state === 'cooling-down' && bus.unitState(2).state === 'cooling-down', { what: 'both units cooling down' });
    // Enough probes for a backing-off cool-down to reach 8 s; silent with the whole bus, it stays at its first period.
    const timeoutsAtCooldown = bus.stats().timeouts;
    await waitFor(() => bus.stats().timeouts >= timeoutsAtCooldown + 8 && bus.stats().silenceReopens >= 1, { what: 'probes while silent', timeoutMs: 60_000 });
    expect(bus.unitState(1).cooldownLevel).toBe(0);
    expect(bus.unitState(2).cooldownLevel).toBe(0);

    peer.muted = false;
    const back = Date.now();
    const first = await waitFor(() => samples.find((s) => s.ts >= back), { what: 'a value after the peer answers again', timeoutMs: 30_000 });
    const other = first.device === 'a' ? 'b' : 'a';
    const otherCyclesAtFirst = poller.stats().find((s) => s.device === other)!.cycles;
    await waitFor(() => samples.some((s) => s.ts >= back && s.device === other), { what: 'the other unit back', timeoutMs: 30_000 });
    // The other unit did not wait out its own period: it read at one of its next two cycles.
    expect(poller.stats().find((s) => s.device === other)!.cycles - otherCyclesAtFirst).toBeLessThanOrEqual(2);
    expect(wrongValues).toBe(0);
    expect(bus.unitState(1).state).toBe('ok');
    expect(bus.unitState(2).state).toBe('ok');
  }, 120_000);
});
