// State files hold credentials and reports: readable by the gateway's user only (0600), whatever
// the umask of whoever ran it. SQLite gives its -wal/-shm files the mode of the database file.
import { chmodSync, closeSync, openSync } from 'node:fs';

export const PRIVATE_FILE_MODE = 0o600;

/** Creates the file empty with mode 0600 unless it exists, and narrows it (and its -wal/-shm) to 0600. */
export function ensurePrivateFile(path: string): void {
  closeSync(openSync(path, 'a', PRIVATE_FILE_MODE));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      chmodSync(file, PRIVATE_FILE_MODE);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}
