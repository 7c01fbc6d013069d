// vitest globalSetup, once per run before any test file: the Debian test peers (installed as root
// with apt-get, else one message naming the install line), and the run's marker that every child
// carries; at the end, nothing the run started may still be running.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describeLeftovers, reapLeftovers, RUN_MARKER } from './leftovers.js';
import { ensurePeers, MissingTestPeersError, type PeerSystem } from './peer-install.js';
import { DEBIAN_TEST_PEERS, findFileIn, findProgram, type DebianPeer } from './peers.js';
import { PYTHON } from './pymodbus.js';

/** dpkg's view: `${Package} ii` lines for installed packages (dpkg-query exits 1 naming unknown ones). */
function installedPackages(names: readonly string[]): ReadonlySet<string> {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Package} ${db:Status-Abbrev}\\n', ...names], { encoding: 'utf8' });
  if (r.error) return new Set();
  return new Set(r.stdout.split('\n').filter((line) => / ii ?$/.test(line)).map((line) => line.split(' ')[0]!));
}

function probe(peer: DebianPeer): boolean {
  const p = peer.probe;
  if ('program' in p) return findProgram(p.program) !== undefined;
  if ('anyFile' in p) return p.anyFile.some((file) => existsSync(file));
  if ('fileIn' in p) return findFileIn(p.fileIn, p.named) !== undefined;
  const code = 'import importlib.util, sys\nsys.exit(0 if importlib.util.find_spec(sys.argv[1]) else 1)';
  return spawnSync(PYTHON, ['-c', code, p.pythonModule], { stdio: 'ignore', timeout: 30_000 }).status === 0;
}

const PEERS_CHECKED = 'FIELDGATE_TEST_PEERS_CHECKED';

export const debianSystem: PeerSystem = {
  installedPackages,
  probe,
  isRoot: () => process.getuid?.() === 0,
  hasAptGet: () => findProgram('apt-get') !== undefined,
  runAptGet(args) {
    const r = spawnSync('apt-get', args, { encoding: 'utf8', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, maxBuffer: 64 * 1024 * 1024 });
    if (r.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`}):\n${r.stdout}${r.stderr}`);
  },
  say: (line) => process.stdout.write(`${line}\n`),
};

/** Before any test: the peers there (installed as root), else the message alone and exit 1. */
export function checkPeersOnce(): void {
  if (process.env[PEERS_CHECKED] === '1') return;
  try {
    ensurePeers(DEBIAN_TEST_PEERS, debianSystem, { optional: process.env.FIELDGATE_TEST_PEERS === 'optional' });
  } catch (err) {
    if (!(err instanceof MissingTestPeersError)) throw err;
    // No run summary that would read "0 failed".
    process.stderr.write(`\nfieldgate tests: ${err.message}\n\n`);
    process.exit(1);
  }
  process.env[PEERS_CHECKED] = '1'; // the two runs of test/run-suite.ts check once, before both
}

export default function setup(): () => Promise<void> {
  checkPeersOnce();
  const runId = `${process.pid}-${Date.now()}`;
  process.env[RUN_MARKER] = runId; // the workers start after this, and pass it on to every child
  return async () => {
    const left = await reapLeftovers(runId);
    if (left.length === 0) return;
    process.stderr.write(`\n${describeLeftovers(left)}\n`);
    process.exitCode = 1;
  };
}
