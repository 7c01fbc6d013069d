// test:package on this machine (root, Debian): the 0.1.0 package (conffiles) upgraded over edited
// files; then a fresh install of the amd64 .deb with apt-get, `fieldgate profiles` and `profiles
// check`, the installed unit's command line as user fieldgate against the emulator and the
// simulator (values reach the cloud) with the commissioning page (HTTPS, password set with
// `fieldgate web passwd`; its Apply a new generation in the state directory), a share of the bus
// and a confirmed site_apply from the cloud that survives a restart (remote-site.ts), the README's
// `fieldgate status` (as a user without rights) and `fieldgate reload`, `logs` with no journal;
// an outbox queued with the cloud away; an upgrade to a version that refuses the site (the old one
// keeps serving, also after a simulated reboot); an accepted upgrade over edited files and the
// outbox replayed in order by the new version; remove and purge. Every line a daemon wrote must
// be JSON.
// Before all that, the release scenarios (releases.ts): an older commit's package upgraded to the
// release through the signed apt repository, other builds of the release's version, and a refused
// upgrade from 0.1.0's real code with the README's commands after it.
//   node --conditions=fieldgate-source --import tsx test/package/lifecycle.ts --legacy 0.1.0.deb --deb OLD.deb --upgrade NEW.deb --upgrade-lacks-profile NAME
//     --older-commit OLDER.deb --release RELEASE.deb --other-build SAME-VERSION.deb --other-build-refuses SAME-VERSION-REFUSING.deb
// Prints one line per check and the measurements; exits 1 when a check failed.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, chmodSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'libsql';
import type { Emulator } from '../../packages/emulator/src/index.js';
import { freePort } from '../arm64/site.js';
import { waitFor } from '../helpers/wait.js';
import { rssText, type RunningDaemon } from './daemon.js';
import {
  ENV_FILE, LIB, SITE, STATE, UNIT, WANTS, aptInstall, check, conffiles, currentRelease, debVersion, enableUnit, failures, fakeSystemctl,
  mode, nonJsonLines, note, releases, run, startInstalled, daemonOutput,
} from './harness.js';
import { WEB_CERT, WEB_KEY, applyFromPage, installWebCertificate, profileCommands, readThroughShare, setWebPassword, usePage } from './features.js';
import { remoteApplySurvivesRestart } from './remote-site.js';
import { DEVICE_COUNT, UNITS, counterSeries, siteYaml, startCloud, startDevices, type SiteExtras, type SitePorts } from './site.js';
import { acceptedUpgrade, fromConffileVersion, refusedUpgrade } from './upgrades.js';
import { fleetUpgrades, refusedFromRealOld } from './releases.js';
import { PROJECT_KEY } from '../integration/emulator/helpers.js';

const debOptions = ['legacy', 'deb', 'upgrade', 'upgrade-lacks-profile', 'older-commit', 'release', 'other-build', 'other-build-refuses'] as const;
const { values: given } = parseArgs({ options: Object.fromEntries(debOptions.map((name) => [name, { type: 'string' as const }])) as Record<(typeof debOptions)[number], { type: 'string' }> });
if (debOptions.some((name) => !given[name])) {
  throw new Error(`usage: lifecycle.ts ${debOptions.map((name) => `--${name} X`).join(' ')}`);
}
const args = given as Record<(typeof debOptions)[number], string>;

const work = mkdtempSync(join(tmpdir(), 'fieldgate-package-'));
chmodSync(work, 0o755);
const ports: SitePorts = { healthPort: await freePort(), mqttPort: await freePort(), httpPort: await freePort(), modbusPort: 0 };
const extras: SiteExtras = { webPort: await freePort(), cert: WEB_CERT, key: WEB_KEY, sharePort: await freePort() };
/** The commissioning page's password, set on the box with `fieldgate web passwd`. */
const WEB_PASSWORD = 'package-page-password-7';
const devices = await startDevices();
ports.modbusPort = devices.tcp?.port ?? 0;
let cloud: Emulator | undefined;
let daemon: RunningDaemon | undefined;

/** Reports in the outbox on disk (the daemon stopped): all, and those carrying a counter value. */
function outboxRows(): { all: number; counter: number } {
  const db = new Database(join(STATE, 'outbox.sqlite'), { readonly: true });
  try {
    const count = (where: string) => (db.prepare(`SELECT count(*) AS n FROM outbox ${where}`).get() as { n: number }).n;
    return { all: count(''), counter: count(`WHERE CAST(payload AS TEXT) LIKE '%"counter":%'`) };
  } finally {
    db.close();
  }
}

/**
 * The README's commands on the box, exactly as it writes them: `fieldgate status` by a user with
 * no rights on /etc/fieldgate or /var/lib/fieldgate, `fieldgate reload --config ...` by root,
 * `fieldgate logs` where journald keeps no journal, `fieldgate logs --input FILE | head`.
 */
async function readmeCommands(running: RunningDaemon): Promise<void> {
  const status = run('runuser', ['-u', 'nobody', '--', 'fieldgate', 'status']);
  check(status.code === 0 && status.out.includes('pkg-meter-10') && status.out.includes(`fieldgate ${debVersion(args.deb ?? '')}`),
    `fieldgate status as user nobody (exit ${status.code}: ${status.out.split('\n')[0]})`);
  check(mode('/run/fieldgate/health.json').startsWith('0644 fieldgate'), `the daemon published its port in /run/fieldgate/health.json (${mode('/run/fieldgate/health.json')})`);
  const unchanged = run('fieldgate', ['reload', '--config', SITE]);
  check(unchanged.code === 0 && unchanged.out.includes('no changes'), `fieldgate reload --config ${SITE} on a fresh install (exit ${unchanged.code}: ${unchanged.out.trim()})`);
  writeFileSync(SITE, readFileSync(SITE, 'utf8').replace(/pollIntervalMs: 200ms/, 'pollIntervalMs: 300ms'));
  const applied = run('fieldgate', ['reload', '--config', SITE]);
  const generation = (await running.status()).config?.generation;
  check(applied.code === 0 && applied.out.includes('reloaded') && generation === 2, `an edited site reloaded in the same daemon (exit ${applied.code}: ${applied.out.trim()}; generation ${generation})`);
  const noJournal = run('fieldgate', ['logs']);
  const follow = run('fieldgate', ['logs', '--follow'], { timeoutMs: 30_000 });
  const plainLine = (r: typeof noJournal) => r.code === 69 && r.out.trim().split('\n').length === 1 && r.out.includes('--input FILE');
  check(plainLine(noJournal) && plainLine(follow), `fieldgate logs and logs --follow with no journal: exit ${noJournal.code}/${follow.code}, one line naming --input (${noJournal.out.trim()})`);
  const saved = join(work, 'saved.log');
  writeFileSync(saved, running.log().repeat(50));
  const head = run('sh', ['-c', '{ fieldgate logs --input "$0" 2>"$0.err"; echo $? >"$0.rc"; } | head -n 2', saved]);
  const headCode = readFileSync(`${saved}.rc`, 'utf8').trim();
  const headErr = readFileSync(`${saved}.err`, 'utf8');
  check(head.out.trim().split('\n').length === 2 && headCode === '0' && headErr === '', `fieldgate logs --input FILE | head -n 2 ends quietly (exit ${headCode}${headErr ? `, stderr: ${headErr.slice(0, 200)}` : ''})`);
}

async function everyDeviceReported(since: number): Promise<void> {
  if (!cloud) throw new Error('no cloud');
  const emu = cloud;
  for (const unit of UNITS) {
    await waitFor(async () => (await counterSeries(emu, unit)).some((p) => p.ts >= since), { timeoutMs: 120_000, intervalMs: 250, what: `device ${unit}'s counter in the cloud` });
  }
}

try {
  if (run('dpkg-query', ['-W', 'fieldgate']).code === 0) run('dpkg', ['--purge', 'fieldgate']);
  const oldVersion = debVersion(args.deb);
  const newVersion = debVersion(args.upgrade);
  const fake = fakeSystemctl(work);

  // 0. From 0.1.0, whose site.yaml and fieldgate.env were conffiles, both edited: no prompt.
  fromConffileVersion(args.legacy, args.deb, oldVersion, siteYaml(ports));
  //    Releases: from an older commit through the signed repository; other builds of one version;
  //    refused from 0.1.0's real code, the README's commands after it.
  const releaseContext = {
    work, healthPort: ports.healthPort, fake, siteText: siteYaml(ports), projectKey: PROJECT_KEY,
    refusedDevice: `  - { name: pkg-profile-meter, bus: plant, unitId: ${DEVICE_COUNT + 1}, profile: ${args['upgrade-lacks-profile']} }\n`,
    olderCommitDeb: args['older-commit'], releaseDeb: args.release, otherBuild: args['other-build'],
    otherBuildRefuses: args['other-build-refuses'], legacyDeb: args.legacy, refusingDeb: args.upgrade,
  };
  await fleetUpgrades(releaseContext);
  await refusedFromRealOld(releaseContext);

  // 1. A fresh install as the README says (apt install ./x.deb): user, modes, the files made from
  //    the examples (no conffiles), nothing started on the example.
  const install = aptInstall(args.deb);
  check(install.code === 0, `apt-get -y install ./${args.deb.split('/').pop()} (exit ${install.code})`);
  check(install.out.includes('installed but not started') && install.out.includes('systemctl enable --now fieldgate'), 'postinst says the service is not started, what to edit and how to start');
  const passwd = execFileSync('getent', ['passwd', 'fieldgate'], { encoding: 'utf8' }).trim().split(':');
  check(passwd[5] === STATE && passwd[6] === '/usr/sbin/nologin', `system user fieldgate (home ${passwd[5]}, shell ${passwd[6]})`);
  check(execFileSync('id', ['-nG', 'fieldgate'], { encoding: 'utf8' }).split(/\s+/).includes('dialout'), 'fieldgate is in dialout');
  for (const [path, want] of [['/etc/fieldgate', '0750 root:fieldgate'], [SITE, '0640 root:fieldgate'], [ENV_FILE, '0600 root:root'], [STATE, '0700 fieldgate:fieldgate']]) {
    check(mode(path) === want, `${path} is ${mode(path)} (want ${want})`);
  }
  check(conffiles().trim() === '', 'no conffiles: an upgrade never asks about them');
  check(readFileSync(SITE).equals(readFileSync('/usr/share/fieldgate/site.example.yaml')) && readFileSync(ENV_FILE).equals(readFileSync('/usr/share/fieldgate/fieldgate.env.example')),
    'site.yaml and fieldgate.env made from the examples in /usr/share/fieldgate');
  check(!/^\s*stateDir:/m.test(readFileSync(SITE, 'utf8')), 'the example site file sets no stateDir of its own');
  check(currentRelease() === oldVersion && JSON.stringify(releases()) === JSON.stringify([oldVersion]), `current -> releases/${currentRelease()}`);
  check(run('fieldgate', ['--version']).out === `${oldVersion}\n`, `fieldgate --version prints ${oldVersion}`);
  check(run('runuser', ['-u', 'fieldgate', '--', 'fieldgate', '--version']).out === `${oldVersion}\n`, 'fieldgate --version works for user fieldgate too');
  const emulator = run('fieldgate', ['emulator']);
  check(emulator.code === 69 && emulator.out.includes('development package'), `fieldgate emulator: not in the package, says so (exit ${emulator.code})`);
  profileCommands();
  const example = run('fieldgate', ['validate', SITE]);
  check(example.code === 78, `the unedited example does not validate (exit ${example.code}), so it cannot start polling`);
  const verify = run('systemd-analyze', ['verify', UNIT]);
  check(verify.code === 0 && verify.out.trim() === '', `systemd-analyze verify ${UNIT}${verify.out.trim() ? `: ${verify.out.trim()}` : ''}`);
  const exposure = Number(/Overall exposure level for fieldgate\.service: ([\d.]+)/.exec(run('systemd-analyze', ['security', '--offline=true', UNIT]).out)?.[1]);
  check(exposure <= 1.5, `systemd-analyze security: exposure ${exposure} (<= 1.5)`);

  // 2. The edited site, run as the unit runs it: READY, values in the cloud, user and groups.
  //    With the commissioning page (HTTPS, its password set as docs/web.md says) and a share of the bus.
  cloud = await startCloud(ports.httpPort, ports.mqttPort);
  const ca = installWebCertificate();
  const passwordHash = setWebPassword(WEB_PASSWORD);
  writeFileSync(SITE, siteYaml(ports, undefined, extras));
  check(mode(SITE) === '0640 root:fieldgate', 'editing the site file kept its owner and mode');
  const valid = run('fieldgate', ['validate', SITE]);
  check(valid.code === 0, `fieldgate validate ${SITE}: ${valid.out.split('\n')[0]}`);
  enableUnit();
  let since = Date.now();
  daemon = await startInstalled(work, ports.healthPort);
  const status = readFileSync(`/proc/${daemon.pid}/status`, 'utf8');
  const uid = /^Uid:\s+(\d+)/m.exec(status)?.[1];
  const groups = (/^Groups:\s*(.*)$/m.exec(status)?.[1] ?? '').split(/\s+/);
  const dialout = execFileSync('getent', ['group', 'dialout'], { encoding: 'utf8' }).split(':')[2];
  check(uid === passwd[2] && groups.includes(dialout), `the daemon runs as fieldgate (uid ${uid}) with dialout (groups ${groups.join(' ')})`);
  await everyDeviceReported(since);
  check(true, `all ${DEVICE_COUNT} devices' values reached the cloud`);
  const page = await usePage(extras.webPort, ca, WEB_PASSWORD);
  check(page.ok && page.version === oldVersion, `the page over HTTPS with the password from fieldgate web passwd: ${page.what}, version ${page.version}`);
  const shared = await readThroughShare(extras.sharePort, 1);
  check(JSON.stringify(shared) === '[101,201]', `mbpoll reads unit 1's holding registers through the bus's share: ${JSON.stringify(shared)}`);
  await readmeCommands(daemon);
  // After the README's reload (which applies the seed): the page's Apply, then the cloud's site_apply surviving a restart.
  await applyFromPage(extras.webPort, ca, WEB_PASSWORD, 'pkg-meter-2-token');
  daemon = await remoteApplySurvivesRestart(ports.httpPort, daemon, () => startInstalled(work, ports.healthPort));
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  const bundledRss = rssText(daemon.pid);
  const bundledReady = daemon.readyMs;
  check(await daemon.stop() === 0, 'the daemon stopped cleanly on SIGTERM');
  check(!existsSync('/run/fieldgate/health.json'), 'it removed /run/fieldgate/health.json at stop');
  const edited = readFileSync(SITE);
  const outboxModes = readdirSync(STATE).map((f) => `${f} ${mode(join(STATE, f))}`);
  // The site generations' directory is the service's alone: 0700.
  check(outboxModes.length > 0 && outboxModes.every((m) => m.endsWith(m.startsWith('site ') ? ' 0700 fieldgate:fieldgate' : ' 0600 fieldgate:fieldgate')), `state files 0600 fieldgate (site/ 0700): ${outboxModes.join(', ')}`);

  // Today's Node 20 on the same app and site, for the idle RSS comparison (same run, same box).
  const node20 = run('/usr/bin/node', ['--version']).out.trim();
  if (node20.startsWith('v20.')) {
    since = Date.now();
    daemon = await startInstalled(work, ports.healthPort, '/usr/bin/node');
    await everyDeviceReported(since);
    // The page's three logins as on the bundled runtime (each a 16 MiB scrypt): like for like.
    await usePage(extras.webPort, ca, WEB_PASSWORD);
    await applyFromPage(extras.webPort, ca, WEB_PASSWORD, 'pkg-meter-2-token');
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const rss20 = rssText(daemon.pid);
    note(`start to READY, ${DEVICE_COUNT} devices: bundled Node ${run(`${LIB}/current/bin/node`, ['--version']).out.trim()} ${bundledReady} ms, Node ${node20} ${daemon.readyMs} ms`);
    note(`idle RSS 10 s after every device reported: bundled runtime ${bundledRss}, Node ${node20} ${rss20}`);
    check(await daemon.stop() === 0, `the same app on Node ${node20} stopped cleanly`);
    daemonOutput.pop(); // Node 20's own warnings are not the package's
  } else note(`start to READY ${bundledReady} ms, idle RSS ${bundledRss} (no Node 20 at /usr/bin/node to compare)`);

  // 3. The cloud away: reports queue in the outbox; the daemon stops with them on disk.
  await cloud.close();
  cloud = undefined;
  const counterAt = (unit: number) => devices.simulator.getRegister(unit, 'input', 0) * 65536 + devices.simulator.getRegister(unit, 'input', 1);
  const outageStart = new Map(UNITS.map((u) => [u, counterAt(u)]));
  daemon = await startInstalled(work, ports.healthPort);
  const queued = await waitFor(async () => {
    const depth = (await daemon?.status())?.outbox?.depth ?? 0;
    return depth >= 200 ? depth : undefined;
  }, { timeoutMs: 120_000, intervalMs: 250, what: '200 reports queued in the outbox' });
  check(await daemon.stop() === 0, 'the daemon stopped cleanly with the cloud away');
  daemon = undefined;
  const credentials = readFileSync(join(STATE, 'credentials.json'));

  // 4. Upgrades with apt-get and no terminal: one the new version refuses (the old one keeps
  //    serving, across a simulated reboot; after the fix it switches), then one it accepts.
  const context = {
    work, healthPort: ports.healthPort, oldDeb: args.deb, newDeb: args.upgrade, oldVersion, newVersion, fake,
    refusedDevice: `  - { name: pkg-profile-meter, bus: plant, unitId: ${DEVICE_COUNT + 1}, profile: ${args['upgrade-lacks-profile']} }\n`,
    page: { port: extras.webPort, ca, password: WEB_PASSWORD }, sharePort: extras.sharePort,
  };
  await refusedUpgrade(context, edited);
  acceptedUpgrade(context, edited);
  const outageEnd = new Map(UNITS.map((u) => [u, counterAt(u)]));
  const onDisk = outboxRows();
  check(run('fieldgate', ['--version']).out === `${newVersion}\n`, `fieldgate --version prints ${newVersion} after the upgrade`);

  // 5. The cloud back on the same ports: the new version replays the outbox, in order.
  cloud = await startCloud(ports.httpPort, ports.mqttPort);
  daemon = await startInstalled(work, ports.healthPort);
  check((await daemon.status()).version === newVersion, `the unit now runs ${newVersion}`);
  await waitFor(async () => ((await daemon?.status())?.outbox?.depth ?? 1) === 0 ? true : undefined, { timeoutMs: 180_000, intervalMs: 500, what: 'the outbox replayed' });
  let replayed = 0;
  let ordered = true;
  for (const unit of UNITS) {
    // The emulator stamps reports on arrival: the outage's reports are those with its counter values.
    const from = outageStart.get(unit) ?? 0;
    const to = outageEnd.get(unit) ?? 0;
    const outage = (await counterSeries(cloud, unit)).filter((p) => p.value >= from && p.value <= to);
    replayed += outage.length;
    ordered &&= outage.every((p, i) => i === 0 || p.value >= outage[i - 1].value);
  }
  check(onDisk.all >= queued && onDisk.counter > 0 && replayed >= onDisk.counter,
    `outbox: ${queued} reports queued (depth seen while running), ${onDisk.all} on disk after the upgrades (${onDisk.counter} with a counter value, the rest 'online' states), ${replayed} counter reports from the outage in the cloud after it`);
  check(ordered, 'the replayed reports arrived in order (each device\'s counter never going back)');
  check(readFileSync(join(STATE, 'credentials.json')).equals(credentials), 'the credentials (device 1 fetched its own by device key) survived byte for byte');
  check(await daemon.stop() === 0, 'the upgraded daemon stopped cleanly');
  daemon = undefined;

  // 6. Remove stops and disables, keeps state and config; purge deletes both.
  const remove = run('dpkg', ['--remove', 'fieldgate']);
  check(remove.code === 0 && !existsSync('/usr/bin/fieldgate') && !existsSync(LIB), 'dpkg --remove took the program and every version\'s tree away');
  check(!existsSync(WANTS), 'prerm disabled the unit');
  check(existsSync(STATE) && readdirSync(STATE).length > 0 && existsSync(SITE), 'remove kept /var/lib/fieldgate and the site file');
  const purge = run('dpkg', ['--purge', 'fieldgate']);
  check(purge.code === 0 && !existsSync(STATE) && !existsSync('/etc/fieldgate'), 'dpkg --purge deleted /var/lib/fieldgate and /etc/fieldgate');

  // 7. Every line every packaged daemon wrote, on stdout and stderr, is JSON.
  //    Those daemons ran the page and the share; the password's hash never shows in what they wrote.
  const plain = nonJsonLines();
  check(plain.length === 0, `every daemon line is JSON, page and share on (${daemonOutput.reduce((n, log) => n + log.split('\n').filter(Boolean).length, 0)} lines)${plain.length ? `; not JSON: ${plain.slice(0, 3).join(' | ')}` : ''}`);
  const hashParts = passwordHash.split(':').slice(-2);
  check(!daemonOutput.some((log) => log.includes(passwordHash) || hashParts.some((part) => log.includes(part))), 'the page password\'s hash (nor its salt) is in no daemon line');
} catch (err) {
  check(false, String(err instanceof Error ? err.stack : err));
  if (daemon) note(`daemon log, last lines:\n${daemon.log().trimEnd().split('\n').slice(-20).join('\n')}`);
} finally {
  if (daemon) await daemon.stop();
  await cloud?.close();
  await devices.close();
  rmSync(work, { recursive: true, force: true });
}
if (failures.length > 0) {
  process.stdout.write(`package lifecycle: ${failures.length} check(s) failed\n`);
  process.exitCode = 1;
} else process.stdout.write('package lifecycle: all checks passed\n');
