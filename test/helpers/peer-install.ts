// Decides, before any test runs, what to do about missing Debian test peers: nothing (all there),
// install them (root with apt-get), or stop with one message naming the install line. The system
// calls (dpkg, probes, apt-get) come in through PeerSystem so the decisions have their own tests.
import type { DebianPeer } from './peers.js';

export interface PeerSystem {
  /** The packages of `names` dpkg reports installed (an empty set where there is no dpkg). */
  installedPackages(names: readonly string[]): ReadonlySet<string>;
  /** Whether the peer's program, module or file is there (for what dpkg does not report). */
  probe(peer: DebianPeer): boolean;
  isRoot(): boolean;
  hasAptGet(): boolean;
  /** Runs apt-get with these arguments (DEBIAN_FRONTEND=noninteractive); throws with its output on failure. */
  runAptGet(args: readonly string[]): void;
  /** One line for the person running the tests. */
  say(line: string): void;
}

export type PeerPlan =
  | { kind: 'ready' }
  | { kind: 'install'; packages: readonly string[]; aptGet: ReadonlyArray<readonly string[]> }
  | { kind: 'refuse'; message: string };

export class MissingTestPeersError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MissingTestPeersError';
    this.stack = message; // the message is the whole story; a stack would only bury the install line
  }
}

/** The apt-get arguments that install `packages`, as CI and the README's `npm test` run them. */
export function aptGetCommands(packages: readonly string[]): ReadonlyArray<readonly string[]> {
  return [['update', '-qq'], ['install', '-y', '-qq', '--no-install-recommends', ...packages]];
}

/** The line a person without root runs (with sudo) or a root user on a box without apt-get would need. */
export function installLine(packages: readonly string[], root: boolean): string {
  return `${root ? '' : 'sudo '}apt-get install -y --no-install-recommends ${packages.join(' ')}`;
}

/** The peers neither dpkg nor their probe finds (one dpkg call; probes only for what it misses). */
export function missingPeers(peers: readonly DebianPeer[], system: Pick<PeerSystem, 'installedPackages' | 'probe'>): DebianPeer[] {
  const installed = system.installedPackages(peers.map((p) => p.package));
  return peers.filter((peer) => !installed.has(peer.package) && !system.probe(peer));
}

export function planPeers(missing: readonly string[], { root, aptGet }: { root: boolean; aptGet: boolean }): PeerPlan {
  if (missing.length === 0) return { kind: 'ready' };
  if (root && aptGet) return { kind: 'install', packages: missing, aptGet: aptGetCommands(missing) };
  const why = !aptGet ? 'this machine has no apt-get: install these Debian packages or their equivalents' : 'install them with';
  return {
    kind: 'refuse',
    message: `the tests need Debian test peers that are missing (${missing.join(', ')}); ${why}:\n\n  ${installLine(missing, root)}\n\n`
      + '(`npm test` as root installs them itself; with FIELDGATE_TEST_PEERS=optional the tests run anyway and each one needing a peer fails naming it)',
  };
}

/**
 * Installs or refuses as planned. Throws MissingTestPeersError when peers stay missing. With
 * `optional` it neither installs nor stops (one warning line): each test needing a missing peer
 * then fails on its own, naming it.
 */
export function ensurePeers(peers: readonly DebianPeer[], system: PeerSystem, { optional = false } = {}): PeerPlan {
  const missing = missingPeers(peers, system).map((p) => p.package);
  if (missing.length === 0) return { kind: 'ready' };
  if (optional) {
    system.say(`FIELDGATE_TEST_PEERS=optional: running without ${missing.join(', ')}; tests that need them fail naming them`);
    return { kind: 'ready' };
  }
  const plan = planPeers(missing, { root: system.isRoot(), aptGet: system.hasAptGet() });
  if (plan.kind === 'refuse') throw new MissingTestPeersError(plan.message);
  if (plan.kind === 'install') {
    system.say(`installing the missing Debian test peers: ${plan.packages.join(' ')}`);
    for (const args of plan.aptGet) system.runAptGet(args);
    const still = missingPeers(peers, system).map((p) => p.package);
    if (still.length > 0) throw new MissingTestPeersError(`apt-get installed ${plan.packages.join(' ')} but these test peers are still not found: ${still.join(', ')}`);
  }
  return plan;
}
