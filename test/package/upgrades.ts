// test:package's upgrade scenarios, each with `apt-get -y install ./x.deb </dev/null` and
// DEBIAN_FRONTEND=noninteractive as an unattended upgrade runs it: from 0.1.0 (whose site and env
// files were conffiles) on edited files; to a version that refuses the site in use (the previous
// version stays current, keeps running, and is what a fresh start of the unit runs); and to one
// that accepts it (switched, the running service restarted once).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { get } from 'node:http';
import { parse } from 'yaml';
import type { RunningDaemon } from './daemon.js';
import { filesOpenedDuring, readThroughShare, runAsync, usePage } from './features.js';
import {
  ENV_FILE, LIB, SITE, WANTS, aptInstall, check, conffiles, currentRelease, dpkgStatus, enableUnit, mode, note, releases, run,
  startInstalled, type Ran,
} from './harness.js';

/** dpkg's conffile question, which stdin from /dev/null answers with "end of file". */
const PROMPT = /Configuration file|conffile prompt|\(Y\/I\/N\/O\/D\/Z\)/;
const summary = (r: Ran) => r.out.split('\n').filter((l) => l.startsWith('fieldgate') || /^E: |^dpkg: /.test(l)).join(' | ').slice(0, 600);

/** 0.1.0 (conffiles, code in /usr/lib/fieldgate/{bin,app}) with both files edited, to `deb`. */
export function fromConffileVersion(legacyDeb: string, deb: string, version: string, siteText: string): void {
  run('dpkg', ['--purge', 'fieldgate']);
  const legacy = run('dpkg', ['-i', legacyDeb]);
  check(legacy.code === 0 && /\/etc\/fieldgate\/site\.yaml/.test(conffiles()), `0.1.0 installed, its site.yaml and fieldgate.env conffiles (exit ${legacy.code})`);
  writeFileSync(SITE, siteText);
  writeFileSync(ENV_FILE, `${readFileSync(ENV_FILE, 'utf8')}# edited on the box\nLOG_LEVEL=info\n`);
  const site = readFileSync(SITE);
  const env = readFileSync(ENV_FILE);
  enableUnit();
  const upgrade = aptInstall(deb);
  check(upgrade.code === 0 && !PROMPT.test(upgrade.out), `apt-get -y install </dev/null from 0.1.0 on edited conffiles: exit ${upgrade.code}, no conffile prompt (${summary(upgrade)})`);
  check(dpkgStatus() === 'ii', `dpkg says installed and configured (${dpkgStatus()})`);
  check(readFileSync(SITE).equals(site) && readFileSync(ENV_FILE).equals(env), 'both edited files kept byte for byte');
  check(mode(SITE) === '0640 root:fieldgate' && mode(ENV_FILE) === '0600 root:root', `their modes kept (${mode(SITE)}, ${mode(ENV_FILE)})`);
  // dpkg forgets nothing on its own: the files it no longer ships stay listed as obsolete, and are never asked about again.
  const left = conffiles().split('\n').filter((l) => l.includes('/etc/fieldgate/'));
  check(left.every((l) => l.trim().endsWith('obsolete')), `the old conffiles are obsolete for dpkg, never prompted for: ${left.map((l) => l.trim()).join('; ') || 'none'}`);
  check(currentRelease() === version && JSON.stringify(releases()) === JSON.stringify([version]), `current is ${currentRelease()}, releases ${releases().join(', ')}`);
  check(!existsSync(`${LIB}/bin`) && !existsSync(`${LIB}/app`), "0.1.0's unversioned tree is gone");
  check(run('fieldgate', ['--version']).out === `${version}\n`, `fieldgate --version prints ${version}`);
  const purge = run('dpkg', ['--purge', 'fieldgate']);
  check(purge.code === 0 && !existsSync('/etc/fieldgate') && !existsSync(LIB) && !existsSync(WANTS), 'purged: /etc/fieldgate, /usr/lib/fieldgate and the enablement gone');
}

export interface UpgradeContext {
  work: string;
  healthPort: number;
  oldDeb: string;
  newDeb: string;
  oldVersion: string;
  newVersion: string;
  /** A device block (YAML list item) that the old version accepts and the new refuses. */
  refusedDevice: string;
  fake: { path: string; restarts(): number; setMainPid(pid: number): void };
  /** The site's commissioning page (HTTPS, trusting `ca`, logged in with `password`) and its share. */
  page: { port: number; ca: Buffer; password: string };
  sharePort: number;
}

/** A GET on a new connection (no pool), its status and body. */
function freshGet(url: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = get(url, { agent: false, timeout: 120_000 }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      response.on('error', reject);
    });
    request.on('timeout', () => request.destroy(new Error('no answer within 120 s')));
    request.on('error', reject);
  });
}

/**
 * While the old daemon serves through the refused upgrade: its first /metrics scrape (the
 * metrics library loads then), the page logged in, a read through the share, and the README's
 * reload of an edited site; each must work and name the old version, and every file the daemon
 * opens meanwhile must come from its own releases/<version> tree (strace).
 */
async function exerciseOldDaemon(ctx: UpgradeContext, daemon: RunningDaemon, upgrade: () => void): Promise<void> {
  const generation = (await daemon.status()).config?.generation ?? 0;
  const opened = await filesOpenedDuring(daemon.pid, async () => {
    upgrade();
    // A connection of its own: the upgrade ran synchronously for longer than the daemon's 5 s
    // keep-alive, so a pooled one from the /status call above may be closed by now (undici then
    // says "other side closed", which is the client's pool, not the daemon).
    const metrics = await freshGet(`http://127.0.0.1:${ctx.healthPort}/metrics`).catch((err: Error) => {
      // Why, for the log: the cause, whether the daemon still lives, its last lines.
      const alive = existsSync(`/proc/${daemon.pid}`);
      throw new Error(`/metrics of the old daemon: ${err.message} (${String(err.cause)}); daemon ${alive ? 'alive' : 'gone'}; its last lines:\n${daemon.log().trimEnd().split('\n').slice(-10).join('\n')}`);
    });
    const text = metrics.text;
    check(metrics.status === 200 && text.includes('fieldgate_'), `the old daemon's first /metrics scrape after the new version was unpacked (${metrics.status})`);
    const page = await usePage(ctx.page.port, ctx.page.ca, ctx.page.password);
    check(page.ok && page.version === ctx.oldVersion, `its page over HTTPS, logged in: ${page.what}, version ${page.version}`);
    const shared = await readThroughShare(ctx.sharePort, 1);
    check(JSON.stringify(shared) === '[101,201]', `a read through its share by mbpoll: ${JSON.stringify(shared)}`);
    // Written as JSON (a site file may be): a reload reads that in its worker thread, whose file must be its own too.
    writeFileSync(SITE, JSON.stringify(parse(readFileSync(SITE, 'utf8').replace(/pollIntervalMs: 300ms/g, 'pollIntervalMs: 400ms')), null, 2));
    const reload = await runAsync('fieldgate', ['reload', '--config', SITE]);
    const after = (await daemon.status()).config?.generation;
    check(reload.code === 0 && after === generation + 1, `fieldgate reload --config ${SITE} applied an edit in it (exit ${reload.code}, generation ${generation} -> ${after})`);
  });
  const own = `${LIB}/releases/${ctx.oldVersion}/`;
  const foreign = opened.filter((path) => !path.startsWith(own));
  const code = [...new Set(opened.filter((path) => path.endsWith('.js')).map((path) => path.slice(own.length)))];
  check(foreign.length === 0 && code.some((path) => path.includes('metrics')) && code.some((path) => path.endsWith('-worker.js')),
    `every file it opened under ${LIB} meanwhile is its own (${opened.length} opens; code: ${code.join(', ') || 'none'})${foreign.length ? `; foreign: ${foreign.slice(0, 3).join(', ')}` : ''}`);
}

/**
 * The new version refuses the site in use: configure fails with its problems, the old version
 * stays current and keeps serving, a fresh start of the unit (a reboot) runs it again; after the
 * fix, `dpkg --configure -a` switches and restarts.
 */
export async function refusedUpgrade(ctx: UpgradeContext, edited: Buffer): Promise<void> {
  writeFileSync(SITE, `${edited.toString()}${ctx.refusedDevice}`);
  const oldAccepts = run('fieldgate', ['validate', SITE]);
  check(oldAccepts.code === 0, `${ctx.oldVersion} accepts the site with a device the new version refuses (exit ${oldAccepts.code})`);
  let daemon = await startInstalled(ctx.work, ctx.healthPort);
  try {
    ctx.fake.setMainPid(daemon.pid);
    const restartsBefore = ctx.fake.restarts();
    let refused: Ran = { code: null, out: '', err: '' };
    await exerciseOldDaemon(ctx, daemon, () => { refused = aptInstall(ctx.newDeb, { path: ctx.fake.path }); });
    const problem = refused.out.split('\n').find((l) => /^\s+devices\[/.test(l))?.trim() ?? '';
    check(refused.code !== 0 && refused.out.includes('NOT switched') && problem.includes('profile') && !PROMPT.test(refused.out),
      `apt-get -y install </dev/null of ${ctx.newVersion}: configure fails (exit ${refused.code}) and names the problem (${problem})`);
    note(`postinst: ${summary(refused)}`);
    check(dpkgStatus() === 'iF', `dpkg says half-configured (${dpkgStatus()}): the refusal shows in dpkg's state`);
    check(currentRelease() === ctx.oldVersion, `current still ${currentRelease()}`);
    check(ctx.fake.restarts() === restartsBefore, 'the running service was not restarted');
    const status = await daemon.status();
    check(status.version === ctx.oldVersion && status.pid === daemon.pid, `the old daemon still serves (/status: ${status.version}, PID ${status.pid})`);
    check(run('fieldgate', ['--version']).out === `${ctx.oldVersion}\n`, 'fieldgate runs the version the service runs');
    check(await daemon.stop() === 0, 'the old daemon stopped cleanly (as at a reboot)');
    // A reboot: the unit's command line from scratch.
    daemon = await startInstalled(ctx.work, ctx.healthPort);
    const after = await daemon.status();
    check(after.version === ctx.oldVersion, `after a simulated reboot the unit starts ${after.version} again, READY in ${daemon.readyMs} ms`);
  } finally {
    check(await daemon.stop() === 0, 'and stops cleanly');
  }
  writeFileSync(SITE, edited);
  const restartsBefore = ctx.fake.restarts();
  const configure = run('dpkg', ['--configure', '-a'], { path: ctx.fake.path });
  check(configure.code === 0 && dpkgStatus() === 'ii' && currentRelease() === ctx.newVersion && JSON.stringify(releases()) === JSON.stringify([ctx.newVersion]),
    `site fixed, dpkg --configure -a: exit ${configure.code}, ${dpkgStatus()}, current ${currentRelease()}, releases ${releases().join(', ')}`);
  check(ctx.fake.restarts() === restartsBefore + 1, 'the service restarted once, on the new version');
}

/** Back to the old version (it accepts the site), then the upgrade over edited files, accepted. */
export function acceptedUpgrade(ctx: UpgradeContext, edited: Buffer): void {
  const down = aptInstall(ctx.oldDeb, { path: ctx.fake.path, extra: ['--allow-downgrades'] });
  check(down.code === 0 && currentRelease() === ctx.oldVersion, `downgraded to ${ctx.oldVersion} for the next upgrade (exit ${down.code}, current ${currentRelease()})`);
  writeFileSync(ENV_FILE, `${readFileSync(ENV_FILE, 'utf8')}# edited again\n`);
  const env = readFileSync(ENV_FILE);
  const exampleOf = (deb: string) => execFileSync('sh', ['-c', `dpkg-deb --fsys-tarfile "$0" | tar -xO ./usr/share/fieldgate/site.example.yaml`, deb]);
  check(!exampleOf(ctx.oldDeb).equals(exampleOf(ctx.newDeb)), 'the two versions\' site examples differ');
  const restartsBefore = ctx.fake.restarts();
  const upgrade = aptInstall(ctx.newDeb, { path: ctx.fake.path });
  check(upgrade.code === 0 && upgrade.out.includes('validated') && !PROMPT.test(upgrade.out), `apt-get -y install </dev/null of ${ctx.newVersion} on edited files: exit ${upgrade.code}, no prompt (${summary(upgrade)})`);
  note(`postinst: ${summary(upgrade)}`);
  check(ctx.fake.restarts() === restartsBefore + 1, 'the running service restarted once, after the new version validated the site');
  check(dpkgStatus() === 'ii' && currentRelease() === ctx.newVersion && JSON.stringify(releases()) === JSON.stringify([ctx.newVersion]), `current ${currentRelease()}, the old tree dropped`);
  check(readFileSync(SITE).equals(edited) && readFileSync(ENV_FILE).equals(env), 'the edited site and env files kept byte for byte');
  check(!existsSync(`${SITE}.dpkg-dist`) && !existsSync(`${SITE}.dpkg-new`) && !existsSync(`${ENV_FILE}.dpkg-dist`), 'no .dpkg-dist/.dpkg-new beside them');
  check(mode(SITE) === '0640 root:fieldgate', `the site file is still 0640 root:fieldgate (${mode(SITE)})`);
}
