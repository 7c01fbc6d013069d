// Per-device cloud credentials on disk: one JSON file, mode 0600, replaced atomically
// (temp file + fsync + rename + directory fsync) so a power cut leaves the old or the new file.
import { constants } from 'node:fs';
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';

export type CredentialSource = 'site' | 'api' | 'device-key';

export interface StoredCredential {
  deviceId: string;
  accessToken: string;
  projectKey: string;
  source: CredentialSource;
  /** Unix ms. */
  fetchedAt: number;
  /** Set when the broker refused it: fetch again, but the device id is still good. */
  invalidatedAt?: number;
}

interface StoreFile {
  version: 1;
  devices: Record<string, StoredCredential>;
}

export class CredentialFileError extends Error {
  override readonly name = 'CredentialFileError';
}

function isCredential(value: unknown): value is StoredCredential {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as Record<string, unknown>;
  return typeof c.deviceId === 'string' && typeof c.accessToken === 'string' && typeof c.projectKey === 'string'
    && (c.source === 'site' || c.source === 'api' || c.source === 'device-key') && typeof c.fetchedAt === 'number'
    && (c.invalidatedAt === undefined || typeof c.invalidatedAt === 'number');
}

export class CredentialStore {
  private devices = new Map<string, StoredCredential>();
  private writing: Promise<void> = Promise.resolve();

  constructor(readonly path: string) {}

  /** Read the file; a missing file is an empty store. Unusable entries are skipped and named. */
  async load(): Promise<{ skipped: string[] }> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { skipped: [] };
      throw new CredentialFileError(`cannot read credential file ${this.path}: ${(err as Error).message}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new CredentialFileError(`credential file ${this.path} is not valid JSON`);
    }
    const devices = (parsed as Partial<StoreFile> | null)?.devices;
    if (typeof devices !== 'object' || devices === null) {
      throw new CredentialFileError(`credential file ${this.path} has no "devices" object`);
    }
    const skipped: string[] = [];
    this.devices = new Map();
    for (const [name, value] of Object.entries(devices)) {
      if (isCredential(value)) this.devices.set(name, value);
      else skipped.push(name);
    }
    return { skipped };
  }

  get(name: string): StoredCredential | undefined {
    const credential = this.devices.get(name);
    return credential ? { ...credential } : undefined;
  }

  names(): string[] {
    return [...this.devices.keys()];
  }

  set(name: string, credential: StoredCredential): Promise<void> {
    this.devices.set(name, { ...credential });
    return this.persist();
  }

  delete(name: string): Promise<void> {
    this.devices.delete(name);
    return this.persist();
  }

  /** Writes are serialised; each one writes the whole current map. */
  private persist(): Promise<void> {
    const next = this.writing.then(() => this.writeFile());
    this.writing = next.catch(() => undefined);
    return next;
  }

  private async writeFile(): Promise<void> {
    const body: StoreFile = { version: 1, devices: Object.fromEntries(this.devices) };
    const directory = dirname(this.path);
    await mkdir(directory, { recursive: true, mode: 0o700 });
    const temp = `${this.path}.${process.pid}.tmp`;
    const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 0o600);
    try {
      await handle.writeFile(`${JSON.stringify(body, null, 2)}\n`);
      await handle.chmod(0o600);
      await handle.sync();
    } catch (err) {
      await handle.close();
      await unlink(temp).catch(() => undefined);
      throw err;
    }
    await handle.close();
    await rename(temp, this.path);
    const dir = await open(directory, constants.O_RDONLY);
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }
}
