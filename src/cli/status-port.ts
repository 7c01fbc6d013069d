// Which port `fieldgate status` asks: the one the service listens on. First --port; then, unless
// --config or --env-file names another service, the port the running daemon published
// (health.json in its runtime directory, readable without root: ops/health-address.ts); else as
// the service would choose it: FIELDGATE_HEALTH_PORT (the shell's, else the environment file's),
// else the site file's.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { parseEnvFile } from '../core/env-file.js';
import { readHealthAddress, SERVICE_RUNTIME_DIR, HEALTH_ADDRESS_FILE } from '../ops/health-address.js';
import { parseSiteText } from '../ops/site-file.js';

/** The site-file schema's default for gateway.health.port. */
export const DEFAULT_HEALTH_PORT = 9180;
export const SERVICE_ENV_FILE = '/etc/fieldgate/fieldgate.env';
export const SERVICE_SITE_FILE = '/etc/fieldgate/site.yaml';
/** An environment or site file larger than this is not one of ours: it is not read. */
const MAX_FILE_BYTES = 4 * 1024 * 1024;

export interface PortSources {
  port?: string;
  /** Site file given with --config (else FIELDGATE_CONFIG, else the service's). */
  config?: string;
  /** Environment file given with --env-file (else the service's). */
  envFile?: string;
}

export type PortChoice =
  | { ok: true; port: number; from: string; notes: string[] }
  | { ok: false; message: string };

function parsePort(text: unknown): number | undefined {
  const value = typeof text === 'string' && /^\d{1,5}$/.test(text.trim()) ? Number(text) : text;
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65535 ? value : undefined;
}

type FileRead = { text: string } | { missing: true } | { problem: string };

function readSmallFile(path: string): FileRead {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = fstatSync(fd).size;
    if (size > MAX_FILE_BYTES) return { problem: `larger than ${MAX_FILE_BYTES} bytes` };
    const buffer = Buffer.alloc(size);
    const read = readSync(fd, buffer, 0, size, 0);
    return { text: buffer.subarray(0, read).toString('utf8') };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { missing: true };
    return { problem: code === 'EACCES' ? 'permission denied (try sudo, or pass --port)' : code === 'EISDIR' ? 'is a directory' : String((err as Error).message) };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The site file's health block, or why it gave none. */
function sitePort(path: string, explicit: boolean, notes: string[]): PortChoice | undefined {
  const read = readSmallFile(path);
  if ('missing' in read) return explicit ? { ok: false, message: `${path}: file not found` } : undefined;
  if ('problem' in read) {
    if (explicit) return { ok: false, message: `${path}: ${read.problem}` };
    notes.push(`${path} not read: ${read.problem}`);
    return undefined;
  }
  const parsed = parseSiteText(read.text, path);
  if (parsed.issues.length > 0) return { ok: false, message: `${path}: ${parsed.issues[0].message}` };
  const gateway = (parsed.raw as { gateway?: { health?: { enabled?: unknown; port?: unknown } } } | undefined)?.gateway;
  const health = typeof gateway === 'object' && gateway !== null ? gateway.health : undefined;
  if (health?.enabled === false) return { ok: false, message: `${path}: the health endpoint is switched off (gateway.health.enabled: false), so there is no status to show` };
  if (health?.port === undefined) return undefined;
  const port = parsePort(health.port);
  return port === undefined ? { ok: false, message: `${path}: gateway.health.port must be a port number 1..65535` } : { ok: true, port, from: path, notes };
}

/** The process exists (EPERM: it does, run by another user). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The port to ask, and where it came from; a bad source is an error, not a silent default. */
export function statusPort(sources: PortSources, env: NodeJS.ProcessEnv): PortChoice {
  const notes: string[] = [];
  const fromText = (text: string, from: string): PortChoice => {
    const port = parsePort(text);
    return port === undefined ? { ok: false, message: `${from}: "${text.slice(0, 20)}" is not a port number 1..65535` } : { ok: true, port, from, notes };
  };
  if (sources.port !== undefined) return fromText(sources.port, '--port');
  if (sources.config === undefined && sources.envFile === undefined) {
    const dir = env.FIELDGATE_RUNTIME_DIR ?? SERVICE_RUNTIME_DIR;
    const published = readHealthAddress(dir);
    if (published !== undefined && processAlive(published.pid)) {
      return { ok: true, port: published.port, from: `${dir}/${HEALTH_ADDRESS_FILE} (fieldgate ${published.version}, PID ${published.pid})`, notes };
    }
    notes.push(`no running daemon published its port in ${dir}/${HEALTH_ADDRESS_FILE}`);
  }
  if (env.FIELDGATE_HEALTH_PORT !== undefined) return fromText(env.FIELDGATE_HEALTH_PORT, 'FIELDGATE_HEALTH_PORT');
  const envPath = sources.envFile ?? SERVICE_ENV_FILE;
  const envRead = readSmallFile(envPath);
  let serviceEnv: Record<string, string> = {};
  if ('text' in envRead) serviceEnv = parseEnvFile(envRead.text);
  else if ('problem' in envRead || sources.envFile !== undefined) {
    const why = 'problem' in envRead ? envRead.problem : 'file not found';
    if (sources.envFile !== undefined) return { ok: false, message: `${envPath}: ${why}` };
    notes.push(`${envPath} not read: ${why}`);
  }
  if (serviceEnv.FIELDGATE_HEALTH_PORT !== undefined) return fromText(serviceEnv.FIELDGATE_HEALTH_PORT, `FIELDGATE_HEALTH_PORT in ${envPath}`);
  // The unit names its site file on the command line (--config), which wins over FIELDGATE_CONFIG.
  const site = sources.config ?? env.FIELDGATE_CONFIG;
  // Only --config is a demand: FIELDGATE_CONFIG may come from the service's file (the wrapper),
  // and its site file is not readable by every user.
  const fromSite = sitePort(site ?? SERVICE_SITE_FILE, sources.config !== undefined, notes);
  return fromSite ?? { ok: true, port: DEFAULT_HEALTH_PORT, from: 'the default', notes };
}
