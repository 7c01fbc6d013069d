// test:package's checks of what came after the package work, on the installed package: the
// commissioning page (gateway.web over HTTPS with the certificate and key in /etc/fieldgate, its
// password set with `fieldgate web passwd` as docs/web.md writes it) and a bus share (a Modbus TCP
// server, read with mbpoll as an independent client); `fieldgate profiles` and `profiles check`;
// and where a running daemon loads its code from (strace: every file it opens under
// /usr/lib/fieldgate must be in its own releases/<version>, whatever `current` says meanwhile).
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import { join } from 'node:path';
import { parseEnvFile } from '../../src/core/env-file.js';
import { makeTestCertificates } from '../helpers/tls-certs.js';
import { waitFor } from '../helpers/wait.js';
import { ADMIN_PATH, ENV_FILE, LIB, SITE, STATE, check, mode, note, run, type Ran } from './harness.js';

export const WEB_CERT = '/etc/fieldgate/web.crt';
export const WEB_KEY = '/etc/fieldgate/web.key';
/** gateway.profileDirs' default: a site's own profiles. */
export const SITE_PROFILES = '/etc/fieldgate/profiles';

/**
 * The page's certificate and key where docs/install.md puts them: the key readable by the
 * service's group only (0640 root:fieldgate), the certificate by everyone. Returns the test CA.
 */
export function installWebCertificate(): Buffer {
  const certs = makeTestCertificates();
  try {
    copyFileSync(certs.certFile, WEB_CERT);
    copyFileSync(certs.keyFile, WEB_KEY);
    run('chown', ['root:root', WEB_CERT]);
    run('chmod', ['0644', WEB_CERT]);
    run('chown', ['root:fieldgate', WEB_KEY]);
    run('chmod', ['0640', WEB_KEY]);
    return readFileSync(certs.caFile);
  } finally {
    rmSync(certs.dir, { recursive: true, force: true });
  }
}

/**
 * `echo PASSWORD | sudo fieldgate web passwd` on the box: the hash goes into the file the unit
 * reads (/etc/fieldgate/fieldgate.env), which keeps root:root 0600 and every other variable.
 * Returns the hash written.
 */
export function setWebPassword(password: string): string {
  const before = parseEnvFile(readFileSync(ENV_FILE, 'utf8'));
  const set = run('sh', ['-c', 'printf "%s\\n" "$0" | fieldgate web passwd', password]);
  const after = parseEnvFile(readFileSync(ENV_FILE, 'utf8'));
  const hash = after.FIELDGATE_WEB_PASSWORD_HASH ?? '';
  const { FIELDGATE_WEB_PASSWORD_HASH: _new, ...others } = after;
  check(set.code === 0 && set.out.includes(ENV_FILE) && hash.startsWith('scrypt:') && JSON.stringify(others) === JSON.stringify({ ...before }),
    `fieldgate web passwd wrote the hash into ${ENV_FILE}, every other variable kept (exit ${set.code}: ${set.out.trim()})`);
  check(mode(ENV_FILE) === '0600 root:root', `${ENV_FILE} is still ${mode(ENV_FILE)} (want 0600 root:root)`);
  check(!readFileSync(ENV_FILE, 'utf8').includes(password), 'the password itself is not in the file');
  return hash;
}

interface Answer { status: number; cookie?: string; body: string }

function call(port: number, ca: Buffer, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  const options: RequestOptions = { host: '127.0.0.1', port, method, path, headers, ca, timeout: 30_000 };
  return new Promise((resolve, reject) => {
    const req = request(options, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { text += chunk; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, cookie: res.headers['set-cookie']?.[0]?.split(';')[0], body: text }));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer`)));
    req.end(body);
  });
}

/**
 * The page as a browser uses it, over HTTPS trusting only the test CA: the page, a session, a
 * wrong password refused, the right one logged in, the status behind it. Returns the version the
 * page's status names ('' when it did not answer).
 */
export async function usePage(port: number, ca: Buffer, password: string): Promise<{ ok: boolean; version: string; what: string }> {
  const page = await call(port, ca, 'GET', '/');
  // Every file the page's shell names (scripts, styles) is served from the code itself.
  const assets = [...page.body.matchAll(/(?:src|href)="(\/[^"]+)"/g)].map((m) => m[1]);
  const served = await Promise.all(assets.map(async (path) => {
    const asset = await call(port, ca, 'GET', path);
    return asset.status === 200 && asset.body.length > 100;
  }));
  const session = await call(port, ca, 'GET', '/api/session');
  const { csrf, passwordRequired } = JSON.parse(session.body) as { csrf: string; passwordRequired: boolean };
  const headers = { Cookie: session.cookie ?? '', 'X-CSRF-Token': csrf, 'Content-Type': 'application/json', Origin: `https://127.0.0.1:${port}` };
  const wrong = await call(port, ca, 'POST', '/api/login', headers, JSON.stringify({ password: `${password}-wrong` }));
  const login = await call(port, ca, 'POST', '/api/login', headers, JSON.stringify({ password }));
  const status = await call(port, ca, 'GET', '/api/status', { Cookie: login.cookie ?? '' });
  const version = status.status === 200 ? (JSON.parse(status.body) as { version?: string }).version ?? '' : '';
  const ok = page.status === 200 && page.body.includes('<html') && assets.length > 0 && served.every(Boolean) && passwordRequired && wrong.status === 401 && login.status === 200 && status.status === 200;
  return { ok, version, what: `page ${page.status} with ${served.filter(Boolean).length} of ${assets.length} assets, password required ${passwordRequired}, wrong password ${wrong.status}, login ${login.status}, status ${status.status}` };
}

/**
 * The site-file page on a packaged box (`allowReload` on): the running site shown with its
 * secrets hidden, and Apply taken as a new generation in /var/lib/fieldgate/site (the service may
 * write there under ProtectSystem=strict); the seed /etc/fieldgate/site.yaml is left as it was.
 * The edit moves one device's poll interval by 50 ms, so each call changes something.
 */
export async function applyFromPage(port: number, ca: Buffer, password: string, hiddenSecret: string): Promise<void> {
  const session = await call(port, ca, 'GET', '/api/session');
  const origin = `https://127.0.0.1:${port}`;
  const first = { Cookie: session.cookie ?? '', 'X-CSRF-Token': (JSON.parse(session.body) as { csrf: string }).csrf, 'Content-Type': 'application/json', Origin: origin };
  const login = await call(port, ca, 'POST', '/api/login', first, JSON.stringify({ password }));
  const headers = { Cookie: login.cookie ?? '', 'X-CSRF-Token': (JSON.parse(login.body) as { csrf: string }).csrf, 'Content-Type': 'application/json', Origin: origin };
  const shown = await call(port, ca, 'GET', '/api/site', { Cookie: headers.Cookie });
  const body = shown.status === 200 ? (JSON.parse(shown.body) as { text: string; path: string }) : { text: '', path: '' };
  check(body.text.includes('pkg-meter-1') && !body.text.includes(hiddenSecret) && body.text.includes('{{secret-') && body.path.startsWith(`${STATE}/site/generation-`),
    `the page shows the running site (${body.path}) with its secrets hidden (${shown.status})`);
  const before = readFileSync(SITE);
  const edited = body.text.replace(/(name: pkg-meter-2[\s\S]*?pollIntervalMs: )(\d+)ms/, (_all, head: string, ms: string) => `${head}${Number(ms) + 50}ms`);
  const apply = await call(port, ca, 'POST', '/api/site/apply', headers, JSON.stringify({ text: edited }));
  const answer = apply.status === 200 ? (JSON.parse(apply.body) as { outcome?: string; sha256?: string }) : {};
  const generations = readdirSync(join(STATE, 'site')).filter((f) => /^generation-\d+\.yaml$/.test(f));
  const kept = generations.find((f) => answer.sha256 !== undefined && createHash('sha256').update(readFileSync(join(STATE, 'site', f))).digest('hex') === answer.sha256);
  check(apply.status === 200 && answer.outcome === 'applied' && kept !== undefined && mode(join(STATE, 'site', kept)) === '0600 fieldgate:fieldgate' && readFileSync(SITE).equals(before),
    `Apply on the page as user fieldgate: ${apply.status} ${answer.outcome ?? apply.body.slice(0, 160)}, a generation ${kept ?? '(none)'} in ${STATE}/site (${kept ? mode(join(STATE, 'site', kept)) : '-'}), ${SITE} left as it was`);
}

/**
 * A command run without blocking this process, which hosts the simulated devices and the cloud
 * the daemon talks to (run() waits synchronously: a share's forwarded read would find no device).
 */
export function runAsync(command: string, argv: string[], timeoutMs = 60_000): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(command, argv, { encoding: 'utf8', timeout: timeoutMs, env: { ...process.env, PATH: ADMIN_PATH } }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
      resolve({ code, out: `${stdout}${stderr}`, err: stderr });
    });
  });
}

/** Holding registers 0 and 1 of `unit` through the share, read by mbpoll (an independent Modbus TCP client). */
export async function readThroughShare(port: number, unit: number): Promise<number[]> {
  const r = await runAsync('mbpoll', ['-m', 'tcp', '-p', String(port), '-a', String(unit), '-t', '4', '-0', '-r', '0', '-c', '2', '-1', '-o', '5', '127.0.0.1'], 30_000);
  const values = [...r.out.matchAll(/^\[(\d+)\]:\s+(-?\d+)/gm)].map((m) => Number(m[2]));
  if (values.length === 0) note(`mbpoll: ${r.out.trim().split('\n').slice(-2).join(' | ')}`);
  return values;
}

/** `fieldgate profiles`, `profiles show` and `profiles check FILE` as the README and docs/profiles.md write them. */
export function profileCommands(): void {
  const list = run('fieldgate', ['profiles']);
  check(list.code === 0 && list.out.includes('eastron-sdm630'), `fieldgate profiles lists the packaged profiles (exit ${list.code}${list.code === 0 ? '' : `: ${list.out.slice(0, 300)}`})`);
  const show = run('fieldgate', ['profiles', 'show', 'eastron-sdm630']);
  check(show.code === 0 && show.out.length > 100, `fieldgate profiles show eastron-sdm630 (exit ${show.code})`);
  // A site's own profile, where docs/profiles.md puts them (gateway.profileDirs' default): a packaged
  // one under another name, checked as an integrator checks theirs, then listed as the site's.
  const own = `${SITE_PROFILES}/my-meter.yaml`;
  const packaged = readFileSync(`${LIB}/current/app/profiles/eastron-sdm630.yaml`, 'utf8').replace(/^name: eastron-sdm630$/m, 'name: my-meter');
  mkdirSync(SITE_PROFILES, { recursive: true });
  writeFileSync(own, `${packaged}\nnot-a-key-of-a-profile: 1\n`);
  const bad = run('fieldgate', ['profiles', 'check', own]);
  check(bad.code === 78 && bad.out.includes('not-a-key-of-a-profile'), `fieldgate profiles check refuses a broken profile with its problem (exit ${bad.code}: ${bad.out.trim().split('\n')[0]})`);
  writeFileSync(own, packaged);
  const good = run('fieldgate', ['profiles', 'check', own]);
  check(good.code === 0, `fieldgate profiles check ${own} (exit ${good.code}: ${good.out.trim().split('\n')[0]})`);
  const listed = run('runuser', ['-u', 'fieldgate', '--', 'fieldgate', 'profiles']).out.split('\n').find((l) => l.startsWith('my-meter ')) ?? '';
  check(/\bsite\b/.test(listed), `the site's profile in ${SITE_PROFILES} is listed as the site's, also for user fieldgate (${listed.replace(/\s+/g, ' ').trim()})`);
  // Any other user cannot read /etc/fieldgate (0750 root:fieldgate): the shipped list, and exit 78 naming why (docs/install.md).
  const other = run('runuser', ['-u', 'nobody', '--', 'fieldgate', 'profiles']);
  check(other.code === 78 && other.out.includes('eastron-sdm630') && other.out.includes(`${SITE_PROFILES}: cannot read`),
    `fieldgate profiles as user nobody: the shipped profiles and exit ${other.code} naming ${SITE_PROFILES}`);
}

/**
 * Every file a running daemon opens (all its threads, strace attached by root) while `during`
 * runs. Resolves to the opened paths under /usr/lib/fieldgate.
 */
export async function filesOpenedDuring(pid: number, during: () => Promise<void>): Promise<string[]> {
  const out = join('/tmp', `fieldgate-strace-${pid}-${Date.now()}.txt`);
  const tracer = spawn('strace', ['-f', '-qq', '-e', 'trace=open,openat,openat2,execve', '-o', out, '-p', String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  tracer.stderr?.on('data', (chunk: Buffer) => { err += chunk.toString(); });
  const ended = new Promise<void>((resolve) => tracer.once('exit', () => resolve()));
  try {
    // strace writes the file once it is attached to every thread.
    await waitFor(() => existsSync(out) || tracer.exitCode !== null ? true : undefined, { timeoutMs: 30_000, intervalMs: 50, what: 'strace attached' });
    if (tracer.exitCode !== null) throw new Error(`strace -p ${pid} failed: ${err}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await during();
  } finally {
    tracer.kill('SIGINT');
    await ended;
  }
  const text = existsSync(out) ? readFileSync(out, 'utf8') : '';
  rmSync(out, { force: true });
  return [...text.matchAll(/(?:open|openat|openat2|execve)\((?:[A-Z_]+, )?"([^"]+)"/g)].map((m) => m[1]).filter((path) => path.startsWith('/usr/lib/fieldgate'));
}
