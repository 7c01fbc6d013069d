// The Debian programs the tests use as independent peers. A test whose peer is missing fails at
// once, naming the program and the package that provides it, instead of timing out waiting for it.
import { execFileSync } from 'node:child_process';
import { accessSync, constants, readdirSync } from 'node:fs';
import { basename, delimiter, isAbsolute, join } from 'node:path';

/** Program -> the Debian package that installs it (`npm test` installs them all as root, see DEBIAN_TEST_PEERS). */
export const PEER_PACKAGES: Readonly<Record<string, string>> = {
  mosquitto: 'mosquitto',
  mosquitto_passwd: 'mosquitto',
  mosquitto_sub: 'mosquitto-clients',
  mosquitto_pub: 'mosquitto-clients',
  socat: 'socat',
  mbpoll: 'mbpoll',
  stdbuf: 'coreutils',
  '/usr/bin/python3': 'python3',
  python3: 'python3',
};

/** Python module -> its Debian package (pymodbus 3.0 is Debian's, under /usr/bin/python3). */
export const PYTHON_MODULE_PACKAGES: Readonly<Record<string, string>> = {
  pymodbus: 'python3-pymodbus',
  serial_asyncio: 'python3-serial-asyncio',
  'paho.mqtt.client': 'python3-paho-mqtt',
  fuse: 'python3-fuse',
};

export class MissingPeerError extends Error {
  constructor(what: string, debianPackage: string) {
    super(`${what}: this test needs it as an independent peer; install the Debian package ${debianPackage} (sudo apt-get install ${debianPackage}; \`npm test\` as root installs every test peer)`);
    this.name = 'MissingPeerError';
  }
}

/** Where Debian's libfaketime may be (amd64, arm64, the old unsplit path). */
export const LIBFAKETIME_PATHS: readonly string[] = ['/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1', '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1', '/usr/lib/faketime/libfaketime.so.1'];
/** The browser the commissioning page's tests drive (Debian's chromium unless FIELDGATE_CHROMIUM names another). */
export const CHROMIUM = process.env.FIELDGATE_CHROMIUM ?? '/usr/bin/chromium';
/** Where systemd's shared library is (test/unit/env-file.test.ts asks systemd itself how it reads an env file). */
export const LIBSYSTEMD_SHARED_DIRS: readonly string[] = ['/usr/lib/x86_64-linux-gnu/systemd', '/usr/lib/aarch64-linux-gnu/systemd'];
export const LIBSYSTEMD_SHARED_NAME = /^libsystemd-shared-\d+\.so$/;

/** How to tell a peer is there without dpkg (another distribution, a peer built from source). */
export type PeerProbe =
  | { program: string }
  | { pythonModule: string }
  | { anyFile: readonly string[] }
  | { fileIn: readonly string[]; named: RegExp };

export interface DebianPeer {
  package: string;
  probe: PeerProbe;
}

/**
 * Every Debian package the suite needs as a peer. Before any test runs, test/helpers/peers-setup.ts
 * installs the missing ones (root with apt-get) or stops, naming the `apt-get install` line.
 */
export const DEBIAN_TEST_PEERS: readonly DebianPeer[] = [
  { package: 'socat', probe: { program: 'socat' } },
  // The emulator's walk-throughs are curl commands; a minimal Debian has no curl.
  { package: 'curl', probe: { program: 'curl' } },
  { package: 'mosquitto', probe: { program: 'mosquitto' } },
  { package: 'mosquitto-clients', probe: { program: 'mosquitto_sub' } },
  { package: 'mbpoll', probe: { program: 'mbpoll' } },
  { package: 'python3-pymodbus', probe: { pythonModule: 'pymodbus' } },
  { package: 'python3-serial-asyncio', probe: { pythonModule: 'serial_asyncio' } },
  { package: 'python3-paho-mqtt', probe: { pythonModule: 'paho.mqtt.client' } },
  { package: 'python3-fuse', probe: { pythonModule: 'fuse' } },
  { package: 'faketime', probe: { anyFile: LIBFAKETIME_PATHS } },
  { package: 'chromium', probe: { anyFile: [CHROMIUM] } },
  { package: 'libsystemd-shared', probe: { fileIn: LIBSYSTEMD_SHARED_DIRS, named: LIBSYSTEMD_SHARED_NAME } },
];

/** The first file of `dirs` whose name matches, or undefined. */
export function findFileIn(dirs: readonly string[], named: RegExp): string | undefined {
  for (const dir of dirs) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    const name = names.find((n) => named.test(n));
    if (name !== undefined) return join(dir, name);
  }
  return undefined;
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Where `program` runs from (PATH as it is now), or undefined. */
export function findProgram(program: string): string | undefined {
  return isAbsolute(program)
    ? (executable(program) ? program : undefined)
    : (process.env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, program)).find(executable);
}

/** Where `program` runs from (PATH as it is now), or a MissingPeerError naming its package. */
export function requireProgram(program: string): string {
  const found = findProgram(program);
  if (found === undefined) {
    throw new MissingPeerError(`${program} not found${isAbsolute(program) ? '' : ' on PATH'}`, PEER_PACKAGES[program] ?? PEER_PACKAGES[basename(program)] ?? basename(program));
  }
  return found;
}

const checkedModules = new Set<string>();

/** Every module importable by `python`, or a MissingPeerError naming the first missing one's package. */
export function requirePythonModules(python: string, modules: readonly string[]): void {
  requireProgram(python);
  for (const module of modules) {
    if (checkedModules.has(`${python} ${module}`)) continue;
    if (!/^[A-Za-z_][A-Za-z0-9_.]*$/.test(module)) throw new Error(`not a python module name: ${module}`);
    try {
      execFileSync(python, ['-c', `import ${module}`], { stdio: 'ignore', timeout: 30_000 });
    } catch {
      throw new MissingPeerError(`python module ${module} not found for ${python}`, PYTHON_MODULE_PACKAGES[module] ?? `python3-${module.replace(/_/g, '-')}`);
    }
    checkedModules.add(`${python} ${module}`);
  }
}
