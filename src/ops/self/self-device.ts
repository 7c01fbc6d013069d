// fieldgate as a cloud device of its own: the attribute reporter and the command handler over one
// SelfChannel (cloud/mqtt/self-channel.ts over the identity's MQTT link).
import type { SelfIdentitySettings } from '../../core/config/self-identity.js';
import type { SelfChannel } from '../../core/self-channel.js';
import type { GatewayStatus } from '../status.js';
import { SelfCommands, type SelfCommandDeps } from './commands.js';
import { TemporaryLogLevel, type LevelControl } from './log-level.js';
import { SelfReporter } from './reporter.js';

export interface SelfDeviceOptions extends Pick<SelfCommandDeps, 'buses' | 'devices' | 'pollDevice' | 'time' | 'log' | 'site'> {
  channel: SelfChannel;
  settings: SelfIdentitySettings;
  status(): GatewayStatus;
  /** Resident memory in bytes (process.memoryUsage.rss in production). */
  rss(): number;
  level: LevelControl;
}

export class SelfDevice {
  readonly reporter: SelfReporter;
  readonly commands: SelfCommands;
  private readonly logLevel: TemporaryLogLevel;

  constructor(options: SelfDeviceOptions) {
    const { time, log } = options;
    const sample = () => ({ status: options.status(), rssBytes: options.rss(), at: time.now() });
    this.logLevel = new TemporaryLogLevel(options.level, time, log);
    this.reporter = new SelfReporter({ channel: options.channel, sample, settings: options.settings, time, log });
    this.commands = new SelfCommands({
      limits: options.settings.commands, sample, buses: options.buses, devices: options.devices,
      pollDevice: (device) => options.pollDevice(device), logLevel: this.logLevel, time, log,
      ...(options.site ? { site: options.site } : {}),
    });
    options.channel.onCommand((command) => this.commands.handle(command));
  }

  start(): void {
    this.reporter.start();
  }

  /** Stops reporting and puts a temporary log level back. */
  stop(): void {
    this.reporter.stop();
    this.logLevel.revert();
  }
}

/** The identity's settings with every bound the site file left out at its default. */
export function selfSettings(configured: Partial<SelfIdentitySettings> | undefined, defaults: SelfIdentitySettings): SelfIdentitySettings {
  return { ...defaults, ...configured, commands: { ...defaults.commands, ...configured?.commands }, site: { ...defaults.site, ...configured?.site } };
}
