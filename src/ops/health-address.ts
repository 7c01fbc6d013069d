// Where `fieldgate status` finds the running daemon's health endpoint without root: a small file,
// health.json, readable by everyone, in the runtime directory (the unit's RuntimeDirectory=
// /run/fieldgate, named by FIELDGATE_RUNTIME_DIR or systemd's RUNTIME_DIRECTORY). It holds the
// daemon's pid, the endpoint's host and port and the version: no secret. Removed at stop.
import { closeSync, fchmodSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const HEALTH_ADDRESS_FILE = 'health.json';
/** The unit's RuntimeDirectory=, where the CLI looks when nothing names another. */
export const SERVICE_RUNTIME_DIR = '/run/fieldgate';

export interface HealthAddress {
  pid: number;
  host: string;
  port: number;
  version: string;
}

/** The runtime directory the daemon publishes in, if the environment names one. */
export function runtimeDirOf(env: NodeJS.ProcessEnv): string | undefined {
  const dir = env.FIELDGATE_RUNTIME_DIR ?? env.RUNTIME_DIRECTORY?.split(':')[0];
  return dir === undefined || dir === '' ? undefined : dir;
}

/** Writes health.json (0644 whatever the umask, replaced whole by rename); returns its remover. */
export function publishHealthAddress(dir: string, address: HealthAddress): () => void {
  const path = join(dir, HEALTH_ADDRESS_FILE);
  const temporary = `${path}.${address.pid}.tmp`;
  const fd = openSync(temporary, 'w', 0o644);
  try {
    fchmodSync(fd, 0o644);
    writeSync(fd, `${JSON.stringify(address)}\n`);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
  return () => {
    // Only our own: a newer daemon may have published since.
    if (readHealthAddress(dir)?.pid === address.pid) rmSync(path, { force: true });
  };
}

/** The published address, or undefined when there is none or it is not one. */
export function readHealthAddress(dir: string): HealthAddress | undefined {
  try {
    const parsed = JSON.parse(readFileSync(join(dir, HEALTH_ADDRESS_FILE), 'utf8')) as Partial<HealthAddress>;
    const { pid, host, port, version } = parsed;
    if (!Number.isInteger(pid) || !Number.isInteger(port) || typeof host !== 'string' || typeof version !== 'string') return undefined;
    if ((port as number) < 1 || (port as number) > 65535 || (pid as number) < 1) return undefined;
    return { pid: pid as number, host, port: port as number, version };
  } catch {
    return undefined;
  }
}
