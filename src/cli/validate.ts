// `fieldgate validate SITE`: every problem of a site file at once (exit 78), or each device's read plan.
import { parseArgs } from 'node:util';
import { checkHost } from '../ops/host-checks.js';
import { ConfigError, loadConfig } from '../ops/site-file.js';
import { formatIssue } from '../core/config/issues.js';
import { formatPlanSummary, summarisePlan } from '../core/modbus/plan.js';
import type { Config } from '../core/config/config.js';
import { subDevicesOf } from '../core/config/gateway-mode.js';
import { shareExposureWarning } from '../core/config/share.js';
import { pinFromStateDir } from '../ops/sub-device-record.js';
import { EXIT_CONFIG, EXIT_USAGE, type CliCommand, wantsHelp } from './io.js';

const USAGE = 'usage: fieldgate validate SITE.yaml\n';

function describeSite(config: Config): string[] {
  const { buses, devices } = config.site;
  const points = devices.reduce((sum, device) => sum + device.points.length, 0);
  const lines = [`site OK: ${buses.length} bus(es), ${devices.length} device(s), ${points} point(s)`];
  for (const { config: device, plan } of config.compiled.devices) {
    lines.push(`${device.name}: ${formatPlanSummary(summarisePlan(plan))}`);
  }
  for (const { name, file, shipped } of config.profileOverrides ?? []) lines.push(`profile ${name}: ${file} replaces the shipped ${shipped}`);
  for (const device of config.site.devices) {
    for (const { profile, formerly, now, path } of device.renamedPoints ?? []) lines.push(`warning: ${path}: profile ${profile} renamed "${formerly}" to "${now}" (the point vocabulary); the old id is read as the new one for this release only`);
  }
  const subs = subDevicesOf(config.site, config.gateway.cloud);
  const kept = Object.keys(config.site.announcedAddresses ?? {}).length;
  if (subs.length > 0) lines.push(`sub-devices: ${subs.length}, ${kept} keeping the address announced from ${config.gateway.stateDir}`);
  config.site.buses.forEach((bus, index) => {
    const warning = bus.share ? shareExposureWarning(bus.share) : undefined;
    if (warning) lines.push(`warning: buses[${index}].share: ${warning}`);
  });
  return lines;
}

export const runValidate: CliCommand = async (args, io) => {
  if (wantsHelp(args)) {
    io.stdout.write(USAGE);
    return 0;
  }
  let file: string;
  try {
    const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
    if (positionals.length !== 1) throw new Error('expected exactly one site file');
    file = positionals[0];
  } catch (err) {
    io.stderr.write(`${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
    return EXIT_USAGE;
  }
  let config: Config;
  try {
    // A state directory a daemon ran on knows the sub-device addresses it announced: kept, or the site is refused.
    const pinned = pinFromStateDir(loadConfig(file, io.env, checkHost));
    if (!pinned.config) throw new ConfigError(pinned.issues);
    config = pinned.config;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const issue of err.issues) io.stderr.write(`${formatIssue(issue)}\n`);
    const count = err.issues.length;
    io.stderr.write(`${file}: ${count} problem${count === 1 ? '' : 's'}\n`);
    return EXIT_CONFIG;
  }
  io.stdout.write(`${describeSite(config).join('\n')}\n`);
  return 0;
};
