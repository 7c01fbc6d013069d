// `fieldgate scan --identify` on a bus: opens it, identifies each unit, prints one line per unit.
import { formatIssue } from '../core/config/issues.js';
import type { BusConfig } from '../core/config/site-types.js';
import { openScanTransport } from './scan-transport.js';
import { loadProfiles } from '../ops/profile-library.js';
import { EXIT_CONFIG, EXIT_UNAVAILABLE, type CliIo } from './io.js';
import { describeIdentifiedUnit, identifyUnit, transportReader } from './scan-identify.js';

export async function runIdentifyScan(bus: BusConfig, units: readonly number[], profileDirs: readonly string[], io: CliIo): Promise<number> {
  const loaded = loadProfiles(profileDirs);
  if (loaded.issues.length > 0) {
    for (const issue of loaded.issues) io.stderr.write(`${formatIssue(issue)}\n`);
    io.stderr.write(`fieldgate scan: ${loaded.issues.length} problem(s) in the profiles: \`fieldgate profiles check FILE\` shows them for one file\n`);
    return EXIT_CONFIG;
  }
  const profiles = loaded.library.names().map((n) => loaded.library.get(n)!).filter((p) => p.identification);
  if (profiles.length === 0) {
    io.stderr.write('fieldgate scan: no profile declares identification registers, so none can be proposed\n');
    return EXIT_UNAVAILABLE;
  }
  const transport = await openScanTransport(bus, io);
  if (!transport) return EXIT_UNAVAILABLE;
  let matched = 0;
  try {
    for (const unit of units) {
      const result = await identifyUnit(profiles, transportReader(transport, unit, bus.timeoutMs), unit);
      if (result.matches.length > 0) matched += 1;
      io.stdout.write(describeIdentifiedUnit(result));
    }
  } finally {
    await transport.close().catch(() => undefined);
  }
  if (matched > 0) return 0;
  io.stderr.write(`fieldgate scan: no unit matches the identification of any of the ${profiles.length} profile(s) that declare one (${units.length} unit(s) scanned)\n`);
  return EXIT_UNAVAILABLE;
}
