// test:package's release scenarios (issue: every build a release a fleet can tell apart):
// - an older commit's package (its own code, built from git history) installed from the signed
//   apt repository over loopback HTTP, then the release added to it and taken with
//   `apt-get upgrade`: switched, restarted, the restarted unit runs the later build;
// - another build under the same version (one file differs): switched and restarted; one that
//   refuses the site in use: refused loudly, the running build kept;
// - a refused upgrade from 0.1.0's real code (its secrets in fieldgate.env, which that code does
//   not read itself): the README's validate, status and reload on the kept tree after it.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../arm64/site.js';
import { startChild } from '../helpers/child.js';
import { waitFor } from '../helpers/wait.js';
import type { RunningDaemon } from './daemon.js';
import {
  ENV_FILE, LIB, REPO_ROOT, SITE, aptInstall, check, daemonOutput, currentRelease, debVersion, dpkgStatus, enableUnit, note, releases, run, startInstalled, type Ran,
} from './harness.js';

export interface ReleaseContext {
  work: string;
  healthPort: number;
  fake: { path: string; restarts(): number; setMainPid(pid: number): void };
  /** The site the current code and the older commit's accept (siteYaml). */
  siteText: string;
  /** A device block every package accepts but the refusing ones (`refusingDeb`, `otherBuildRefuses`). */
  refusedDevice: string;
  projectKey: string;
  olderCommitDeb: string;
  releaseDeb: string;
  otherBuild: string;
  otherBuildRefuses: string;
  legacyDeb: string;
  refusingDeb: string;
}

const summary = (r: Ran) => r.out.split('\n').filter((l) => l.startsWith('fieldgate') || /^E: |^W: |^dpkg: |upgraded/.test(l)).join(' | ').slice(0, 600);
const installedVersion = () => run('dpkg-query', ['-W', '-f=${Version}', 'fieldgate']).out.trim();

/**
 * A static web server on 127.0.0.1 for one directory, as a fleet serves its repository: its own
 * process (python3's http.server), since apt-get runs synchronously from this one.
 */
async function serveDirectory(dir: string): Promise<{ stop(): Promise<void>; port: number }> {
  const port = await freePort();
  const server = startChild('/usr/bin/python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', dir]);
  await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/Release`).then((r) => r.ok, () => false)) || server.exited(), { timeoutMs: 60_000, what: 'the repository\'s web server' });
  if (server.exited()) throw new Error(`http.server exited: ${server.output()}`);
  return { stop: () => server.stop(), port };
}

/** apt-get on the fleet repository only: its own source list, lists and cache (the box's stay untouched). */
function fleetApt(work: string, port: number, keyring: string): (args: string[], path?: string) => Ran {
  const list = join(work, 'fleet.list');
  writeFileSync(list, `deb [signed-by=${keyring}] http://127.0.0.1:${port}/ ./\n`);
  for (const dir of ['lists/partial', 'cache/archives/partial']) mkdirSync(join(work, 'fleet-apt', dir), { recursive: true });
  const options = ['-o', `Dir::Etc::SourceList=${list}`, '-o', 'Dir::Etc::SourceParts=/nonexistent', '-o', `Dir::State::Lists=${join(work, 'fleet-apt/lists')}`,
    '-o', `Dir::Cache=${join(work, 'fleet-apt/cache')}`];
  return (args, path) => run('apt-get', ['-y', '-q', ...options, ...(path ? ['-o', `DPkg::Path=${path}`] : []), ...args], path ? { path } : {});
}

const addToRepo = (repo: string, deb: string) => execFileSync('bash', [join(REPO_ROOT, 'scripts/apt-repo.sh'), repo, deb], { stdio: ['ignore', 'ignore', 'pipe'] });

async function restartUnit(ctx: ReleaseContext, daemon: RunningDaemon): Promise<RunningDaemon> {
  await daemon.stop();
  const next = await startInstalled(ctx.work, ctx.healthPort);
  ctx.fake.setMainPid(next.pid);
  return next;
}

/** Older commit -> release through the signed repository, then other builds of the release's version. */
export async function fleetUpgrades(ctx: ReleaseContext): Promise<void> {
  const oldVersion = debVersion(ctx.olderCommitDeb);
  const version = debVersion(ctx.releaseDeb);
  run('dpkg', ['--purge', 'fieldgate']);
  const repo = join(ctx.work, 'fleet-repo');
  addToRepo(repo, ctx.olderCommitDeb);
  const server = await serveDirectory(repo);
  const port = server.port;
  let daemon: RunningDaemon | undefined;
  try {
    const keyring = join(ctx.work, 'fieldgate.gpg');
    copyFileSync(join(repo, 'fieldgate-archive-keyring.gpg'), keyring);
    const apt = fleetApt(ctx.work, port, keyring);
    const update = apt(['update']);
    const untrusted = /^E: |^W: .*(sign|NO_PUBKEY|GPG|InRelease)/im;
    check(update.code === 0 && !untrusted.test(update.out), `apt-get update on the signed repository over http://127.0.0.1 (exit ${update.code}${/^(W|E): /m.test(update.out) ? `: ${summary(update)}` : ''})`);
    const install = apt(['install', 'fieldgate'], ctx.fake.path);
    check(install.code === 0 && installedVersion() === oldVersion, `apt-get install fieldgate from it: ${installedVersion()} (the older commit's, exit ${install.code})`);
    const named = run('fieldgate', ['--version']).out.trim();
    check(named === oldVersion && /\+\d+\.g[0-9a-f]{9}$/.test(named), `fieldgate --version names the older commit: ${named}`);
    writeFileSync(SITE, ctx.siteText);
    enableUnit();
    daemon = await startInstalled(ctx.work, ctx.healthPort);
    ctx.fake.setMainPid(daemon.pid);
    check((await daemon.status()).version === oldVersion, `the unit runs ${oldVersion}`);

    // The release joins the repository; the box takes it as unattended-upgrades would. First an
    // index signed by nobody in its place: apt refuses it, and nothing is upgraded.
    addToRepo(repo, ctx.releaseDeb);
    const signed = readFileSync(join(repo, 'InRelease'));
    writeFileSync(join(repo, 'InRelease'), readFileSync(join(repo, 'Release')));
    const forged = [apt(['update']), apt(['upgrade'], ctx.fake.path)];
    check((forged[0].code !== 0 || /^(W|E): /m.test(forged[0].out)) && installedVersion() === oldVersion,
      `an unsigned InRelease in the repository: apt-get update refuses it (${summary(forged[0]).slice(0, 200)}), ${installedVersion()} stays`);
    writeFileSync(join(repo, 'InRelease'), signed);
    const restarts = ctx.fake.restarts();
    const upgrade = [apt(['update']), apt(['upgrade'], ctx.fake.path)];
    check(upgrade.every((r) => r.code === 0) && upgrade[1].out.includes('1 upgraded') && installedVersion() === version,
      `apt-get update && apt-get upgrade: ${oldVersion} -> ${installedVersion()} (${summary(upgrade[1])})`);
    check(ctx.fake.restarts() === restarts + 1 && currentRelease() === version && JSON.stringify(releases()) === JSON.stringify([version]),
      `switched after validating the site and restarted once (current ${currentRelease()}, releases ${releases().join(', ')})`);
    daemon = await restartUnit(ctx, daemon);
    const metrics = await (await fetch(`http://127.0.0.1:${ctx.healthPort}/metrics`)).text();
    check((await daemon.status()).version === version && metrics.includes(`fieldgate_build_info{version="${version}"} 1`) && run('fieldgate', ['--version']).out === `${version}\n`,
      `the restarted unit runs the later build: /status, fieldgate_build_info and --version say ${version}`);

    // Another build of the same version: switched and restarted, not "nothing to do".
    const before = ctx.fake.restarts();
    const other = run('dpkg', ['-i', ctx.otherBuild], { path: ctx.fake.path });
    const marker = () => readFileSync(`${LIB}/current/app/bin/fieldgate.js`, 'utf8').includes('another build of the same version');
    check(other.code === 0 && other.out.includes('differs from the installed') && ctx.fake.restarts() === before + 1 && marker() && currentRelease() === version,
      `another build of ${version} (one file differs): switched and restarted (exit ${other.code}, restarts ${ctx.fake.restarts() - before}; ${summary(other)})`);
    daemon = await restartUnit(ctx, daemon);
    // One that refuses the site in use: refused loudly, the running build stays.
    writeFileSync(SITE, `${ctx.siteText}${ctx.refusedDevice}`);
    const refusedBefore = ctx.fake.restarts();
    const refused = run('dpkg', ['-i', ctx.otherBuildRefuses], { path: ctx.fake.path });
    check(refused.code !== 0 && refused.out.includes('NOT switched to this build') && marker() && ctx.fake.restarts() === refusedBefore && dpkgStatus() === 'iF',
      `a build of ${version} that refuses the site: configure fails (exit ${refused.code}, ${dpkgStatus()}), the running build kept, no restart`);
    check((await daemon.status()).version === version, 'the daemon still serves');
  } finally {
    if (daemon) await daemon.stop();
    await server.stop();
    writeFileSync(SITE, ctx.siteText);
    run('dpkg', ['--purge', 'fieldgate']);
  }
}

/**
 * 0.1.0's real code (conffiles, no RELEASE file, a command that reads no environment file) refuses
 * nothing; the next version refuses the site: the kept 0.1.0 tree must still get the service's
 * environment from the new /usr/bin/fieldgate, so the README's commands work on it.
 */
export async function refusedFromRealOld(ctx: ReleaseContext): Promise<void> {
  run('dpkg', ['--purge', 'fieldgate']);
  const legacy = run('dpkg', ['-i', ctx.legacyDeb]);
  const legacyVersion = debVersion(ctx.legacyDeb);
  check(legacy.code === 0, `${legacyVersion} (its own code) installed (exit ${legacy.code})`);
  // Its secret where the docs say: in fieldgate.env, not in the site file.
  writeFileSync(SITE, `${ctx.siteText.replace(/^ {4}projectKey: .*\n/m, '')}${ctx.refusedDevice}`);
  writeFileSync(ENV_FILE, `${readFileSync(ENV_FILE, 'utf8')}FIELDGATE_PROJECT_KEY=${ctx.projectKey}\n`);
  enableUnit();
  const accepted = run('fieldgate', ['validate', SITE]);
  check(accepted.code === 0, `${legacyVersion}'s own fieldgate validate accepts the site (exit ${accepted.code})`);
  let daemon: RunningDaemon | undefined;
  try {
    const refused = aptInstall(ctx.refusingDeb, { path: ctx.fake.path });
    check(refused.code !== 0 && refused.out.includes('NOT switched') && currentRelease() === legacyVersion,
      `upgrade to ${debVersion(ctx.refusingDeb)} refused (exit ${refused.code}), ${currentRelease()} kept current`);
    daemon = await startInstalled(ctx.work, ctx.healthPort);
    check((await daemon.status()).version === legacyVersion, `the unit runs ${legacyVersion}'s kept tree`);
    const validate = run('fieldgate', ['validate', SITE]);
    check(validate.code === 0, `after the refusal, sudo fieldgate validate ${SITE} on the kept tree: exit ${validate.code} (${validate.out.split('\n')[0]})`);
    const status = run('fieldgate', ['status']);
    check(status.code === 0 && status.out.includes(legacyVersion), `sudo fieldgate status: exit ${status.code} (${status.out.split('\n')[0]})`);
    const reload = run('fieldgate', ['reload', '--config', SITE]);
    check(reload.code === 0, `sudo fieldgate reload --config ${SITE}: exit ${reload.code} (${reload.out.trim().split('\n')[0]})`);
    note(`kept ${legacyVersion}: ${releases().join(', ')}`);
  } finally {
    if (daemon) {
      await daemon.stop();
      daemonOutput.pop(); // 0.1.0's own lines (a Node deprecation warning among them) are not this package's
    }
    run('dpkg', ['--purge', 'fieldgate']);
  }
}
