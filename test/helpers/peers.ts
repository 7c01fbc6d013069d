// The Debian programs the tests use as independent peers. A test whose peer is missing fails at
// once, naming the program and the package that provides it, instead of timing out waiting for it.
import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { basename, delimiter, isAbsolute, join } from 'node:path';

/** Program -> the Debian package that installs it (.ci/run installs them all). */
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
};

export class MissingPeerError extends Error {
  constructor(what: string, debianPackage: string) {
    super(`${what}: this test needs it as an independent peer; install the Debian package ${debianPackage} (sudo apt-get install ${debianPackage}; .ci/run installs every test peer)`);
    this.name = 'MissingPeerError';
  }
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Where `program` runs from (PATH as it is now), or a MissingPeerError naming its package. */
export function requireProgram(program: string): string {
  const found = isAbsolute(program)
    ? (executable(program) ? program : undefined)
    : (process.env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, program)).find(executable);
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
