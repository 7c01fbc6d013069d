// What `npm test` does about the Debian test peers before any test runs (test/helpers/peer-install.ts),
// with dpkg, the probes and apt-get injected: nothing when all are there, an install as root with
// apt-get, otherwise one message naming the exact install line.
import { describe, expect, it } from 'vitest';
import { ensurePeers, MissingTestPeersError, type PeerSystem } from '../helpers/peer-install.js';
import { DEBIAN_TEST_PEERS, type DebianPeer } from '../helpers/peers.js';

const PEERS: DebianPeer[] = [
  { package: 'socat', probe: { program: 'socat' } },
  { package: 'mosquitto', probe: { program: 'mosquitto' } },
  { package: 'python3-pymodbus', probe: { pythonModule: 'pymodbus' } },
];

interface Box {
  /** Packages dpkg lists as installed (undefined: no dpkg on this box). */
  dpkg?: string[];
  /** Packages whose program or module is there without dpkg knowing (built from source, another distribution). */
  probed?: string[];
  root: boolean;
  aptGet: boolean;
  /** What apt-get install does: installs the packages (true), or fails. */
  aptWorks?: boolean;
}

function fakeSystem(box: Box) {
  const installed = new Set(box.dpkg ?? []);
  const calls = { dpkg: 0, probes: [] as string[], apt: [] as string[][], said: [] as string[] };
  const system: PeerSystem = {
    installedPackages(names) {
      calls.dpkg += 1;
      return box.dpkg === undefined ? new Set() : new Set(names.filter((n) => installed.has(n)));
    },
    probe(peer) {
      calls.probes.push(peer.package);
      return (box.probed ?? []).includes(peer.package);
    },
    isRoot: () => box.root,
    hasAptGet: () => box.aptGet,
    runAptGet(args) {
      calls.apt.push([...args]);
      if (args[0] !== 'install') return;
      if (box.aptWorks === false) throw new Error('E: Unable to locate package');
      for (const name of args.filter((a) => !a.startsWith('-')).slice(1)) installed.add(name);
      box.dpkg ??= [];
    },
    say: (line) => calls.said.push(line),
  };
  return { system, calls };
}

const ALL = ['socat', 'mosquitto', 'python3-pymodbus'];
const INSTALL = ['install', '-y', '-qq', '--no-install-recommends'];

describe('ensurePeers', () => {
  it.each<{ what: string; box: Box; apt: string[][]; said: string[] }>([
    { what: 'all there (dpkg): no probe, no apt-get', box: { dpkg: ALL, root: true, aptGet: true }, apt: [], said: [] },
    { what: 'all there, not root: nothing asked of anyone', box: { dpkg: ALL, root: false, aptGet: true }, apt: [], said: [] },
    { what: 'dpkg misses one its probe finds (built from source): no install', box: { dpkg: ['socat', 'python3-pymodbus'], probed: ['mosquitto'], root: true, aptGet: true }, apt: [], said: [] },
    { what: 'no dpkg, every probe finds its peer', box: { probed: ALL, root: false, aptGet: false }, apt: [], said: [] },
    {
      what: 'root with apt-get: the missing ones installed, one line saying which',
      box: { dpkg: ['socat'], root: true, aptGet: true },
      apt: [['update', '-qq'], [...INSTALL, 'mosquitto', 'python3-pymodbus']],
      said: ['installing the missing Debian test peers: mosquitto python3-pymodbus'],
    },
    {
      what: 'root on a fresh machine: all of them in one install',
      box: { dpkg: [], root: true, aptGet: true },
      apt: [['update', '-qq'], [...INSTALL, ...ALL]],
      said: ['installing the missing Debian test peers: socat mosquitto python3-pymodbus'],
    },
  ])('$what', ({ box, apt, said }) => {
    const { system, calls } = fakeSystem(box);
    ensurePeers(PEERS, system);
    expect(calls.apt).toEqual(apt);
    expect(calls.said).toEqual(said);
  });

  it('asks dpkg once and probes nothing when dpkg has every peer (the quick path of every run)', () => {
    const { system, calls } = fakeSystem({ dpkg: ALL, root: true, aptGet: true });
    ensurePeers(PEERS, system);
    expect(calls.dpkg).toBe(1);
    expect(calls.probes).toEqual([]);
  });

  it.each<{ what: string; box: Box; line: string; also: RegExp }>([
    { what: 'not root', box: { dpkg: ['socat'], root: false, aptGet: true }, line: 'sudo apt-get install -y --no-install-recommends mosquitto python3-pymodbus', also: /install them with/ },
    { what: 'not root, no apt-get either', box: { dpkg: [], root: false, aptGet: false }, line: 'sudo apt-get install -y --no-install-recommends socat mosquitto python3-pymodbus', also: /no apt-get/ },
    { what: 'root without apt-get', box: { root: true, aptGet: false }, line: '\n  apt-get install -y --no-install-recommends socat mosquitto python3-pymodbus\n', also: /no apt-get: install these Debian packages or their equivalents/ },
  ])('stops before any test with one message naming the install line: $what', ({ box, line, also }) => {
    const { system, calls } = fakeSystem(box);
    let error: unknown;
    try {
      ensurePeers(PEERS, system);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(MissingTestPeersError);
    const message = (error as Error).message;
    expect(message).toContain(line);
    expect(message).toMatch(also);
    expect(message).toMatch(/^the tests need Debian test peers that are missing \(/);
    expect((error as Error).stack).toBe(message); // no stack trace burying the line
    expect(calls.apt).toEqual([]);
    expect(calls.said).toEqual([]);
  });

  it('fails naming apt-get\'s own error when the install fails', () => {
    const { system } = fakeSystem({ dpkg: [], root: true, aptGet: true, aptWorks: false });
    expect(() => ensurePeers(PEERS, system)).toThrow('E: Unable to locate package');
  });

  it('fails naming what is still missing after an install that did not bring it', () => {
    const { system } = fakeSystem({ dpkg: [], root: true, aptGet: true });
    system.installedPackages = () => new Set(['socat']);
    expect(() => ensurePeers(PEERS, system)).toThrow(/still not found: mosquitto, python3-pymodbus$/);
  });

  it('with FIELDGATE_TEST_PEERS=optional: neither installs nor stops, one warning line', () => {
    const { system, calls } = fakeSystem({ dpkg: ['socat'], root: true, aptGet: true });
    ensurePeers(PEERS, system, { optional: true });
    expect(calls.apt).toEqual([]);
    expect(calls.said).toEqual(['FIELDGATE_TEST_PEERS=optional: running without mosquitto, python3-pymodbus; tests that need them fail naming them']);
  });

  it('knows every peer the README and .ci/run named', () => {
    expect(DEBIAN_TEST_PEERS.map((p) => p.package)).toEqual(expect.arrayContaining([
      'socat', 'mosquitto', 'mosquitto-clients', 'mbpoll', 'python3-pymodbus', 'python3-serial-asyncio', 'python3-paho-mqtt', 'faketime', 'chromium',
    ]));
  });
});
