// Buses and pollers for a site: one Bus per line, one Poller per bus with that bus's devices.
import type { CompiledSite } from './core/config/compile.js';
import type { BusConfig, SiteConfig } from './core/config/site-types.js';
import type { LevelWithSilent } from 'pino';
import { CommandService } from './device/commands.js';
import { BusDeviceIo } from './device/device-io.js';
import { componentLogger, type Logger } from './ops/log.js';
import { systemTimers } from './core/time.js';
import { Bus } from './field/modbus/bus.js';
import { createModbusTransport } from './field/modbus/transport.js';
import { Poller, type SampleSink } from './device/poller.js';
import type { BusStatus } from './ops/status.js';

/** Per device: the command path of that device, planning its reads with what its poller learned. */
export function createCommandServices(compiled: CompiledSite, southbound: Southbound, logger: Logger): Map<string, CommandService> {
  const commands = new Map<string, CommandService>();
  for (const device of compiled.devices) {
    const { config } = device;
    const bus = southbound.buses.get(config.bus);
    if (!bus) continue;
    const learned = () => southbound.pollers.get(config.bus)?.readLimits(config.name) ?? {};
    commands.set(config.name, new CommandService(device, config.commands, new BusDeviceIo(bus, config, systemTimers), logger, learned));
  }
  return commands;
}

export interface Southbound {
  readonly buses: ReadonlyMap<string, Bus>;
  readonly pollers: ReadonlyMap<string, Poller>;
  start(): void;
  stop(): Promise<void>;
  busStatus(uptimeMs: number): BusStatus[];
}

/** `cloudShare`: share of each bus's time that cloud work may take while polls wait (1 = unbounded). */
export function createSouthbound(
  site: SiteConfig, compiled: CompiledSite, sink: SampleSink, logger: Logger, levels?: ReadonlyMap<string, LevelWithSilent>, cloudShare = 1,
): Southbound {
  const busLog = componentLogger(logger, 'bus', levels);
  const pollLog = componentLogger(logger, 'poller', levels);
  const buses = new Map<string, Bus>();
  const pollers = new Map<string, Poller>();
  const kinds = new Map<string, BusConfig['kind']>();
  for (const config of site.buses) {
    const concurrentUnits = new Set(site.devices.filter((d) => d.bus === config.name && d.limits.concurrent).map((d) => d.unitId));
    const bus = new Bus({ config, transportFactory: createModbusTransport, logger: busLog, highShare: cloudShare, concurrentUnits });
    buses.set(config.name, bus);
    kinds.set(config.name, config.kind);
    const devices = compiled.devices.filter((d) => d.config.bus === config.name);
    if (devices.length > 0) {
      pollers.set(config.name, new Poller({ bus, devices, sink, logger: pollLog.child({ bus: config.name }) }));
    }
  }
  return {
    buses,
    pollers,
    start() {
      for (const bus of buses.values()) bus.start();
      for (const poller of pollers.values()) poller.start();
    },
    async stop() {
      await Promise.all([...pollers.values()].map((p) => p.stop()));
      await Promise.all([...buses.values()].map((b) => b.stop()));
    },
    busStatus(uptimeMs) {
      return [...buses.values()].map((bus) => {
        const s = bus.stats();
        return {
          name: bus.name, kind: kinds.get(bus.name) ?? 'rtu', up: s.state === 'up',
          transactions: s.transactions, timeouts: s.timeouts, exceptions: s.exceptions, queueDepth: s.queueDepth,
          failures: s.timeouts + s.exceptions + s.frameErrors + s.otherErrors,
          discardedReplies: s.discardedReplies, silenceReopens: s.silenceReopens,
          utilisation: uptimeMs > 0 ? Math.min(1, s.busyTimeMs / uptimeMs) : 0,
        };
      });
    },
  };
}
