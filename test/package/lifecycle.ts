// test:package on this machine (root, Debian): install the amd64 .deb with dpkg, run the installed
// unit's command line as user fieldgate against the emulator and the simulator (values reach the
// cloud), queue an outbox with the cloud away, upgrade to a newer build, check that the edited
// site file and the outbox survived and that the outbox replays in order, then remove and purge.
//   node --conditions=fieldgate-source --import tsx test/package/lifecycle.ts --deb OLD.deb --upgrade NEW.deb
// Prints one line per check and the measurements; exits 1 when a check failed.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, chmodSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'libsql';
import type { Emulator } from '../../packages/emulator/src/index.js';
import { freePort } from '../arm64/site.js';
import { waitFor } from '../helpers/wait.js';
import { environmentFile, rssText, startDaemon, unitCommand, type RunningDaemon } from './daemon.js';
import { DEVICE_COUNT, UNITS, counterSeries, siteYaml, startCloud, startDevices, type SitePorts } from './site.js';

const { values: args } = parseArgs({ options: { deb: { type: 'string' }, upgrade: { type: 'string' } } });
if (!args.deb || !args.upgrade) throw new Error('usage: lifecycle.ts --deb OLD.deb --upgrade NEW.deb');
const SITE = '/etc/fieldgate/site.yaml';
const UNIT = '/usr/lib/systemd/system/fieldgate.service';
const STATE = '/var/lib/fieldgate';

const failures: string[] = [];
const check = (ok: boolean, what: string) => {
  process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${what}\n`);
  if (!ok) failures.push(what);
};
const note = (what: string) => process.stdout.write(`     ${what}\n`);
const run = (command: string, argv: string[], path = process.env.PATH) => {
  const r = spawnSync(command, argv, { encoding: 'utf8', env: { ...process.env, PATH: path, DEBIAN_FRONTEND: 'noninteractive' } });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
};
const debVersion = (deb: string) => execFileSync('dpkg-deb', ['-f', deb, 'Version'], { encoding: 'utf8' }).trim();
const mode = (path: string) => {
  const s = statSync(path);
  const name = (id: number, db: string) => execFileSync('getent', [db, String(id)], { encoding: 'utf8' }).split(':')[0];
  return `${(s.mode & 0o7777).toString(8).padStart(4, '0')} ${name(s.uid, 'passwd')}:${name(s.gid, 'group')}`;
};

const work = mkdtempSync(join(tmpdir(), 'fieldgate-package-'));
chmodSync(work, 0o755);
const ports: SitePorts = { healthPort: await freePort(), mqttPort: await freePort(), httpPort: await freePort(), modbusPort: 0 };
const devices = await startDevices();
ports.modbusPort = devices.tcp?.port ?? 0;
let cloud: Emulator | undefined;
let daemon: RunningDaemon | undefined;

/** The installed unit's command line as user fieldgate, with the unit's environment. */
async function startInstalled(node?: string): Promise<RunningDaemon> {
  const unit = unitCommand(readFileSync(UNIT, 'utf8'));
  const env: Record<string, string> = { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', ...unit.env };
  for (const file of unit.envFiles) if (existsSync(file)) Object.assign(env, environmentFile(readFileSync(file, 'utf8')));
  const argv = node === undefined ? unit.argv : [node, ...unit.argv.slice(1)];
  return startDaemon({ argv, env, cwd: unit.cwd, user: unit.user, dir: work, healthPort: ports.healthPort });
}

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

  // 1. Install: user, modes, conffiles, nothing started on the example.
  const install = run('dpkg', ['-i', args.deb]);
  check(install.code === 0, `dpkg -i ${args.deb.split('/').pop()} (exit ${install.code})`);
  check(install.out.includes('installed but not started') && install.out.includes('systemctl enable --now fieldgate'), 'postinst says the service is not started, what to edit and how to start');
  const passwd = execFileSync('getent', ['passwd', 'fieldgate'], { encoding: 'utf8' }).trim().split(':');
  check(passwd[5] === STATE && passwd[6] === '/usr/sbin/nologin', `system user fieldgate (home ${passwd[5]}, shell ${passwd[6]})`);
  check(execFileSync('id', ['-nG', 'fieldgate'], { encoding: 'utf8' }).split(/\s+/).includes('dialout'), 'fieldgate is in dialout');
  for (const [path, want] of [['/etc/fieldgate', '0750 root:fieldgate'], [SITE, '0640 root:fieldgate'], ['/etc/fieldgate/fieldgate.env', '0600 root:root'], [STATE, '0700 fieldgate:fieldgate']]) {
    check(mode(path) === want, `${path} is ${mode(path)} (want ${want})`);
  }
  const conffiles = execFileSync('dpkg-query', ['-W', '-f=${Conffiles}', 'fieldgate'], { encoding: 'utf8' });
  check(conffiles.includes(SITE) && conffiles.includes('/etc/fieldgate/fieldgate.env'), 'site.yaml and fieldgate.env are conffiles');
  check(run('fieldgate', ['--version']).out === `${oldVersion}\n`, `fieldgate --version prints ${oldVersion}`);
  check(run('runuser', ['-u', 'fieldgate', '--', 'fieldgate', '--version']).out === `${oldVersion}\n`, 'fieldgate --version works for user fieldgate too');
  const emulator = run('fieldgate', ['emulator']);
  check(emulator.code === 69 && emulator.out.includes('development package'), `fieldgate emulator: not in the package, says so (exit ${emulator.code})`);
  // profiles/ (device profiles) ships when the checkout has it; its command must find it installed.
  if (existsSync('profiles')) {
    const profiles = run('fieldgate', ['profiles']);
    check(profiles.code === 0, `fieldgate profiles finds the packaged profiles (exit ${profiles.code}${profiles.code === 0 ? '' : `: ${profiles.out.slice(0, 300)}`})`);
  }
  const example = run('fieldgate', ['validate', SITE]);
  check(example.code === 78, `the unedited example does not validate (exit ${example.code}), so it cannot start polling`);
  const verify = run('systemd-analyze', ['verify', UNIT]);
  check(verify.code === 0 && verify.out.trim() === '', `systemd-analyze verify ${UNIT}${verify.out.trim() ? `: ${verify.out.trim()}` : ''}`);
  const exposure = Number(/Overall exposure level for fieldgate\.service: ([\d.]+)/.exec(run('systemd-analyze', ['security', '--offline=true', UNIT]).out)?.[1]);
  check(exposure <= 1.5, `systemd-analyze security: exposure ${exposure} (<= 1.5)`);

  // 2. The edited site, run as the unit runs it: READY, values in the cloud, user and groups.
  cloud = await startCloud(ports.httpPort, ports.mqttPort);
  writeFileSync(SITE, siteYaml(ports));
  const edited = readFileSync(SITE);
  check(mode(SITE) === '0640 root:fieldgate', 'editing the site file kept its owner and mode');
  const valid = run('fieldgate', ['validate', SITE]);
  check(valid.code === 0, `fieldgate validate ${SITE}: ${valid.out.split('\n')[0]}`);
  let since = Date.now();
  daemon = await startInstalled();
  const status = readFileSync(`/proc/${daemon.pid}/status`, 'utf8');
  const uid = /^Uid:\s+(\d+)/m.exec(status)?.[1];
  const groups = (/^Groups:\s*(.*)$/m.exec(status)?.[1] ?? '').split(/\s+/);
  const dialout = execFileSync('getent', ['group', 'dialout'], { encoding: 'utf8' }).split(':')[2];
  check(uid === passwd[2] && groups.includes(dialout), `the daemon runs as fieldgate (uid ${uid}) with dialout (groups ${groups.join(' ')})`);
  await everyDeviceReported(since);
  check(true, `all ${DEVICE_COUNT} devices' values reached the cloud`);
  // A reload (SIGHUP, what the unit's ExecReload ends in) reads the file in a worker thread: that
  // worker must be found inside the bundle.
  process.kill(daemon.pid, 'SIGHUP');
  const running = daemon;
  await waitFor(() => /"msg":"site file reload(ed|: nothing changed)"/.test(running.log()), { timeoutMs: 60_000, what: 'the site file reload logged' });
  check(true, 'SIGHUP: the bundled daemon reloaded its site file (the worker thread runs from the bundle)');
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  const bundledRss = rssText(daemon.pid);
  const bundledReady = daemon.readyMs;
  check(await daemon.stop() === 0, 'the daemon stopped cleanly on SIGTERM');
  const outboxModes = readdirSync(STATE).map((f) => `${f} ${mode(join(STATE, f))}`);
  check(outboxModes.length > 0 && outboxModes.every((m) => m.endsWith(' 0600 fieldgate:fieldgate')), `state files 0600 fieldgate: ${outboxModes.join(', ')}`);

  // Today's Node 20 on the same app and site, for the idle RSS comparison (same run, same box).
  const node20 = run('/usr/bin/node', ['--version']).out.trim();
  if (node20.startsWith('v20.')) {
    since = Date.now();
    daemon = await startInstalled('/usr/bin/node');
    await everyDeviceReported(since);
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const rss20 = rssText(daemon.pid);
    note(`start to READY, ${DEVICE_COUNT} devices: bundled Node ${run('/usr/lib/fieldgate/bin/node', ['--version']).out.trim()} ${bundledReady} ms, Node ${node20} ${daemon.readyMs} ms`);
    note(`idle RSS 10 s after every device reported: bundled runtime ${bundledRss}, Node ${node20} ${rss20}`);
    check(await daemon.stop() === 0, `the same app on Node ${node20} stopped cleanly`);
  } else note(`start to READY ${bundledReady} ms, idle RSS ${bundledRss} (no Node 20 at /usr/bin/node to compare)`);

  // 3. The cloud away: reports queue in the outbox; the daemon stops with them on disk.
  await cloud.close();
  cloud = undefined;
  const counterAt = (unit: number) => devices.simulator.getRegister(unit, 'input', 0) * 65536 + devices.simulator.getRegister(unit, 'input', 1);
  const outageStart = new Map(UNITS.map((u) => [u, counterAt(u)]));
  daemon = await startInstalled();
  const queued = await waitFor(async () => {
    const depth = (await daemon?.status())?.outbox?.depth ?? 0;
    return depth >= 200 ? depth : undefined;
  }, { timeoutMs: 120_000, intervalMs: 250, what: '200 reports queued in the outbox' });
  check(await daemon.stop() === 0, 'the daemon stopped cleanly with the cloud away');
  const outageEnd = new Map(UNITS.map((u) => [u, counterAt(u)]));
  const onDisk = outboxRows();
  const stateBefore = readdirSync(STATE).sort();
  const credentials = readFileSync(join(STATE, 'credentials.json'));

  // 4. Upgrade: the site file and the state survive; the new version runs.
  const upgrade = run('dpkg', ['-i', args.upgrade]);
  check(upgrade.code === 0, `dpkg -i ${args.upgrade.split('/').pop()} over ${oldVersion} (exit ${upgrade.code})`);
  note(`postinst: ${upgrade.out.split('\n').filter((l) => l.startsWith('fieldgate')).join(' | ')}`);
  check(run('fieldgate', ['--version']).out === `${newVersion}\n`, `fieldgate --version prints ${newVersion} after the upgrade`);
  check(readFileSync(SITE).equals(edited), 'the edited site file survived the upgrade byte for byte');
  check(!existsSync(`${SITE}.dpkg-dist`) && !existsSync(`${SITE}.dpkg-new`), 'no .dpkg-dist/.dpkg-new beside the site file');
  check(mode(SITE) === '0640 root:fieldgate', `the site file is still 0640 root:fieldgate (${mode(SITE)})`);
  check(JSON.stringify(readdirSync(STATE).sort()) === JSON.stringify(stateBefore), `the state directory survived: ${stateBefore.join(', ')}`);
  check(readFileSync(join(STATE, 'credentials.json')).equals(credentials), 'the credentials (device 1 fetched its own by device key) survived byte for byte');

  // 5. The cloud back on the same ports: the new version replays the outbox, in order.
  cloud = await startCloud(ports.httpPort, ports.mqttPort);
  daemon = await startInstalled();
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
    `outbox: ${queued} reports queued (depth seen while running), ${onDisk.all} on disk at the upgrade (${onDisk.counter} with a counter value, the rest 'online' states), ${replayed} counter reports from the outage in the cloud after it`);
  check(ordered, 'the replayed reports arrived in order (each device\'s counter never going back)');
  check(await daemon.stop() === 0, 'the upgraded daemon stopped cleanly');
  daemon = undefined;

  // 6. An upgrade while systemd runs the service (a stand-in systemctl first on PATH records what
  //    the maintainer scripts ask): a site file the new version refuses keeps the old version
  //    running and says why; the fixed file gets the service restarted.
  const fakeBin = join(work, 'fake-systemd');
  const calls = join(work, 'systemctl.calls');
  mkdirSync(fakeBin);
  writeFileSync(join(fakeBin, 'systemctl'), `#!/bin/sh\necho "$*" >> ${calls}\ncase "$1" in is-system-running) echo running ;; esac\nexit 0\n`, { mode: 0o755 });
  const fakePath = `${fakeBin}:${process.env.PATH ?? '/usr/bin:/bin'}`;
  const restarts = () => (existsSync(calls) ? readFileSync(calls, 'utf8') : '').split('\n').filter((l) => l.startsWith('restart')).length;
  writeFileSync(SITE, Buffer.concat([edited, Buffer.from('bogusKey: 1\n')]));
  const refused = run('dpkg', ['-i', args.upgrade], fakePath);
  check(refused.code === 0 && refused.out.includes('NOT restarted') && refused.out.includes('bogusKey') && restarts() === 0,
    `a site file the new version refuses: no restart, and postinst says why (${refused.out.split('\n').filter((l) => l.includes('NOT restarted')).join('')})`);
  writeFileSync(SITE, edited);
  const restarted = run('dpkg', ['-i', args.upgrade], fakePath);
  check(restarted.code === 0 && restarted.out.includes('validated') && restarts() === 1,
    `the site file fixed: validated, then the running service restarted once (${restarted.out.split('\n').filter((l) => l.includes('restarted')).join('')})`);

  // 7. Remove keeps state and config; purge deletes both.
  const remove = run('dpkg', ['--remove', 'fieldgate']);
  check(remove.code === 0 && !existsSync('/usr/bin/fieldgate') && !existsSync('/usr/lib/fieldgate'), 'dpkg --remove took the program away');
  check(existsSync(STATE) && readdirSync(STATE).length > 0 && existsSync(SITE), 'remove kept /var/lib/fieldgate and the site file');
  const purge = run('dpkg', ['--purge', 'fieldgate']);
  check(purge.code === 0 && !existsSync(STATE) && !existsSync('/etc/fieldgate'), 'dpkg --purge deleted /var/lib/fieldgate and /etc/fieldgate');
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
