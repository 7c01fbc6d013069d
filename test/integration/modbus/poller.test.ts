// Poller + Bus + real transport on an RTU pty line with pymodbus: decoded samples for two devices,
// while a third (absent) device goes offline without starving them.
import { afterEach, describe, expect, it } from 'vitest';
import { Bus } from '../../../src/field/modbus/bus.js';
import { createModbusTransport } from '../../../src/field/modbus/transport.js';
import { Poller, type Sample } from '../../../src/device/poller.js';
import { silentLogger } from '../../../src/ops/log.js';
import { rtuBusConfig } from '../../helpers/bus-configs.js';
import { deviceConfig, pointConfig } from '../../helpers/device-configs.js';
import { startPymodbus } from '../../helpers/pymodbus.js';
import { startPtyPair } from '../../helpers/socat.js';
import { waitFor } from '../../helpers/wait.js';
import { compileDevice } from '../../../src/core/config/compile.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function points() {
  return [
    pointConfig({ id: 'setpoint', address: 10, scale: 0.5 }),
    pointConfig({ id: 'counter', address: 12, type: 'uint32', wordOrder: 'little' }),
    pointConfig({ id: 'temperature', address: 0, table: 'input', type: 'int16', offset: -500 }),
    pointConfig({ id: 'pump', address: 1, table: 'coil', type: 'bool' }),
    pointConfig({ id: 'alarm', address: 3, table: 'discrete', type: 'bool' }),
  ];
}

describe('Poller over pymodbus', () => {
  it('emits decoded samples per device and reports an absent device offline once', async () => {
    const pair = await startPtyPair();
    cleanups.push(() => pair.stop());
    const slave = await startPymodbus({ serial: pair.b }, { units: [1, 2] });
    cleanups.push(() => slave.stop());

    const bus = new Bus({
      config: rtuBusConfig({
        path: pair.a, timeoutMs: 400, interFrameDelayMs: 2,
        cooldown: { afterTimeouts: 1, initialMs: 3000, maxMs: 3000 },
      }),
      transportFactory: createModbusTransport,
      logger: silentLogger(),
    });
    cleanups.push(() => bus.stop());
    bus.start();

    const samples: Sample[] = [];
    const states: string[] = [];
    const poller = new Poller({
      bus,
      devices: [
        deviceConfig({ name: 'boiler', unitId: 1, pollIntervalMs: 300, points: points() }),
        deviceConfig({ name: 'chiller', unitId: 2, pollIntervalMs: 300, points: points() }),
        deviceConfig({ name: 'ghost', unitId: 7, pollIntervalMs: 300, points: points() }),
      ].map(compileDevice),
      sink: {
        onSample: (sample) => samples.push(sample),
        onDeviceState: (device, state) => states.push(`${device}:${state}`),
      },
      logger: silentLogger(),
    });
    cleanups.push(() => poller.stop());
    poller.start();
    const startedAt = Date.now();

    await waitFor(() => samples.filter((s) => s.device === 'chiller').length >= 8
      && samples.filter((s) => s.device === 'boiler').length >= 8, { what: '8 samples per device', timeoutMs: 20_000 });

    const boiler = samples.find((s) => s.device === 'boiler')!;
    expect(boiler.errors).toEqual([]);
    expect(boiler.values).toEqual({
      setpoint: 505, counter: 1013 * 65536 + 1012, temperature: 1000, pump: true, alarm: true,
    });
    expect(samples.find((s) => s.device === 'chiller')!.values).toMatchObject({ setpoint: 1005, temperature: 2000 });
    expect(samples.some((s) => s.device === 'ghost')).toBe(false);
    expect(states.filter((s) => s.startsWith('ghost'))).toEqual(['ghost:offline']);
    expect(states).toContain('boiler:online');
    expect(states).toContain('chiller:online');
    // The absent unit cost one timeout per cool-down (plus the first), not one per cycle.
    const cooldowns = Math.ceil((Date.now() - startedAt) / 3000);
    expect(bus.stats().timeouts).toBeLessThanOrEqual(1 + cooldowns);
  });
});
