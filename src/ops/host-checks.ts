// What `run` needs from the machine, checked up front so `validate` and `run` report it as a
// config error (exit 78) instead of a crash at start-up: the CA file and the state directory
// (a path that cannot be a directory, or permissions; a read-only or full filesystem is no config error).
// Messages name paths and reasons, never file contents.
import { X509Certificate } from 'node:crypto';
import { accessSync, closeSync, constants, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { ConfigIssue, GatewaySettings } from '../core/config/site-types.js';

/** A CA bundle larger than this is not a CA bundle. */
const MAX_CA_BYTES = 1024 * 1024;

function reason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'does not exist';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ENOTDIR') return 'a parent of it is a file, not a directory';
  if (code === 'ELOOP') return 'too many symbolic links';
  return code ?? 'cannot be read';
}

function validPem(text: string): boolean {
  try {
    new X509Certificate(text);
    return true;
  } catch {
    return false;
  }
}

/** The problem with the CA file, if any: missing, unreadable, a directory, too big, or no PEM certificate in it. */
export function caFileProblem(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    return `cannot read the CA file: ${reason(err)}`;
  }
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) return 'is a directory, not a PEM file';
    if (stat.size > MAX_CA_BYTES) return `is larger than ${MAX_CA_BYTES} bytes, not a CA bundle`;
    const buffer = Buffer.alloc(Math.min(stat.size, MAX_CA_BYTES));
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    const text = buffer.subarray(0, length).toString('latin1');
    if (!text.includes('-----BEGIN CERTIFICATE-----')) return 'holds no PEM certificate ("-----BEGIN CERTIFICATE-----")';
    return validPem(text) ? undefined : 'holds a PEM certificate block that does not parse';
  } catch (err) {
    return `cannot read the CA file: ${reason(err)}`;
  } finally {
    closeSync(fd);
  }
}

/**
 * Storage conditions, not configuration: a filesystem read-only (remounted after errors), full or
 * failing passes, and `run` starts and holds reports in memory until it takes writes again (the
 * outbox and lock retry on their own); a restart would not help, and exit 78 would end the service.
 */
const STORAGE_CODES = new Set(['EROFS', 'ENOSPC', 'EDQUOT', 'EIO']);

function writableDirectoryProblem(path: string): string | undefined {
  try {
    accessSync(path, constants.W_OK | constants.X_OK);
    return undefined;
  } catch (err) {
    if (STORAGE_CODES.has(String((err as NodeJS.ErrnoException).code))) return undefined;
    return reason(err);
  }
}

/** The problem with the state directory, if any: it must be a writable directory, or creatable in one. */
export function stateDirProblem(path: string): string | undefined {
  let current = resolve(path);
  for (;;) {
    let isDirectory: boolean;
    try {
      isDirectory = statSync(current).isDirectory();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') return `cannot be used: ${reason(err)}`;
      const parent = dirname(current);
      if (parent === current) return 'cannot be created: no existing parent';
      current = parent;
      continue;
    }
    const created = current !== resolve(path);
    if (!isDirectory) return created ? `cannot be created: ${current} is a file, not a directory` : 'is a file, not a directory';
    const problem = writableDirectoryProblem(current);
    if (!problem) return undefined;
    return created ? `cannot be created in ${current}: ${problem}` : `is not writable: ${problem}`;
  }
}

/** Every host-side problem of these gateway settings, with its path. */
export function checkHost(gateway: GatewaySettings): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const stateProblem = stateDirProblem(gateway.stateDir);
  if (stateProblem) issues.push({ path: 'gateway.stateDir', message: `${stateProblem} (${gateway.stateDir})` });
  const ca = gateway.cloud.caFile;
  const caProblem = ca ? caFileProblem(ca) : undefined;
  if (caProblem) issues.push({ path: 'gateway.cloud.caFile', message: `${caProblem} (${ca})` });
  return issues;
}
