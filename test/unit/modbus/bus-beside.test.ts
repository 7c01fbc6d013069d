// Modbus TCP with maxInFlight 1: a unit that timed out goes beside the slot until it answers, so
// its neighbour waits for its timeout once, not once per request; a server that does not serve
// requests side by side turns this off, logged once.
import { beforeEach, describe, expect, it } from 'vitest';
import { Bus } from '../../../src/field/modbus/bus.js';
import { rtuBusConfig, tcpBusConfig } from '../../helpers/bus-configs.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { FakeTransport } from '../../helpers/fake-transport.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import type { BusConfig } from '../../../src/core/config/site-types.js';

let clock = new ManualClock(1_700_000_000_000);
beforeEach(() => {
  clock = new ManualClock(1_700_000_000_000);
});

const SILENT = 2;
const NEIGHBOUR = 1;
const TIMEOUT_MS = 300;

/** Both units asked every 250 ms like two pollers; returns how long each of the neighbour's reads waited. */
async function run(config: BusConfig, rounds: number, behaviour?: (transport: FakeTransport) => void) {
  const transport = new FakeTransport(clock);
  const log = captureLogger();
  const bus = new Bus({ config, transportFactory: () => transport, clock, timers: clock, logger: log.logger });
  bus.start();
  await clock.advanceAsync(50);
  transport.behaviour = (unit) => (unit === SILENT ? 'timeout' : 'ok');
  behaviour?.(transport);
  const neighbourWaits: number[] = [];
  let silentBusy = false;
  for (let round = 0; round < rounds; round += 1) {
    if (!silentBusy) {
      silentBusy = true; // one request at a time per unit, like a poll cycle
      void bus.read(SILENT, 'holding', 0, 2).catch(() => undefined).finally(() => { silentBusy = false; });
    }
    const issued = clock.now();
    void bus.read(NEIGHBOUR, 'holding', 0, 2).then(() => neighbourWaits.push(clock.now() - issued), () => neighbourWaits.push(Infinity));
    await clock.advanceAsync(250);
  }
  await clock.advanceAsync(1000);
  await bus.stop();
  await new Promise((resolve) => setTimeout(resolve, 20)); // the log stream writes on a later turn
  return { neighbourWaits, transport, log, stats: bus.stats() };
}

describe('a timed-out unit on Modbus TCP with maxInFlight 1', () => {
  const config = tcpBusConfig({ timeoutMs: TIMEOUT_MS, maxInFlight: 1, cooldown: { afterTimeouts: 100, initialMs: 5000, maxMs: 5000 } });

  it('holds its neighbour back for its timeout once, then goes beside the slot', async () => {
    const { neighbourWaits, transport, stats } = await run(config, 40);
    expect(neighbourWaits).toHaveLength(40);
    // Only the neighbour's reads issued during the silent unit's first timeout waited (for it, once).
    expect(neighbourWaits[0]).toBeGreaterThan(TIMEOUT_MS);
    expect(neighbourWaits[1]).toBeLessThan(TIMEOUT_MS);
    expect(neighbourWaits.slice(2).every((ms) => ms === transport.latencyMs)).toBe(true);
    expect(stats.timeouts).toBeGreaterThan(5); // the silent unit kept being asked, beside
    expect(transport.maxInFlight).toBe(2);
    expect(transport.maxInFlightPerUnit(SILENT)).toBe(1);
  });

  it('a server that answers one request at a time turns it off, logged once', async () => {
    // The neighbour's reads sent while the silent unit's read is on the wire get no answer.
    const { neighbourWaits, transport, log } = await run(config, 40, (t) => {
      t.behaviour = (unit) => (unit === SILENT || t.inFlight > 1 ? 'timeout' : 'ok'); // inFlight counts this call
    });
    expect(log.count('bus server does not serve requests side by side: timed-out units no longer go beside the others')).toBe(1);
    expect(neighbourWaits.filter((ms) => ms === Infinity)).toHaveLength(1);
    // From then on one request at a time again.
    const firstFailure = transport.calls.findIndex((c) => c.unit === NEIGHBOUR && c.outcome === 'ModbusTimeoutError');
    const later = transport.calls.slice(firstFailure + 1);
    expect(later.every((c) => later.filter((o) => o.startedAt < (c.endedAt ?? Infinity) && (o.endedAt ?? Infinity) > c.startedAt).length === 1)).toBe(true);
  });

  it('never on an RTU line', async () => {
    const { transport } = await run(rtuBusConfig({ timeoutMs: TIMEOUT_MS, cooldown: { afterTimeouts: 100, initialMs: 5000, maxMs: 5000 } }), 10);
    expect(transport.maxInFlight).toBe(1);
  });
});
