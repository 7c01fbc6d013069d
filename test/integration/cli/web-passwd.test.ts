// `fieldgate web passwd` writes a salted scrypt hash into the env file, which the site file's
// gateway.web then reads from the environment; the password itself is never written.
import { chmodSync, chownSync, lstatSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli.js';
import { parseEnvFile } from '../../../src/core/env-file.js';
import { validateGateway } from '../../../src/core/config/schema.js';
import { verifyPassword } from '../../../src/ops/web/password.js';
import { capturedIo } from '../../helpers/run-cli.js';
import { skipUnless } from '../../helpers/skips.js';

async function passwd(args: string[], input: string, env: NodeJS.ProcessEnv = {}) {
  const captured = capturedIo(env);
  const stdin = new PassThrough();
  stdin.end(input);
  const code = await main(['web', 'passwd', ...args], { ...captured.io, stdin });
  return { code, out: captured.out(), err: captured.err() };
}

describe('fieldgate web passwd', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  function envFile(text?: string): string {
    const dir = mkdtempSync(join(tmpdir(), 'fg-webpw-'));
    dirs.push(dir);
    const file = join(dir, 'fieldgate.env');
    if (text !== undefined) writeFileSync(file, text);
    return file;
  }

  it('writes a hash that verifies, keeps the other lines, replaces an old hash, file mode 0600', async () => {
    const file = envFile('FIELDGATE_MQTT_URL=mqtt://broker:1883\nFIELDGATE_WEB_PASSWORD_HASH=scrypt:old\n# note\n');
    const result = await passwd(['--env-file', file], 'correct horse battery\nignored second line\n');
    expect(result).toMatchObject({ code: 0, err: '' });
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain('correct horse');
    expect(text).not.toContain('scrypt:old');
    expect(text).toContain('# note');
    const vars = parseEnvFile(text);
    expect(vars.FIELDGATE_MQTT_URL).toBe('mqtt://broker:1883');
    const hash = vars.FIELDGATE_WEB_PASSWORD_HASH;
    expect(hash).toMatch(/^scrypt:16384:8:1:/);
    expect(await verifyPassword('correct horse battery', hash)).toBe(true);
    expect(await verifyPassword('correct horse batterY', hash)).toBe(false);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // The daemon's config takes it from the environment and accepts the page on the LAN.
    const { gateway, issues } = validateGateway({ web: { port: 8443, address: '0.0.0.0' } }, { FIELDGATE_WEB_PASSWORD_HASH: hash });
    expect(issues).toEqual([]);
    expect(gateway?.web).toMatchObject({ port: 8443, address: '0.0.0.0', passwordHash: hash, allowWrites: false, allowReload: false, maxEventClients: 20 });
  });

  it('takes the last file of FIELDGATE_ENV_FILES and creates it when missing', async () => {
    const file = envFile();
    const result = await passwd([], 'a long enough password\n', { FIELDGATE_ENV_FILES: `/nonexistent/service.env:${file}` });
    expect(result.code).toBe(0);
    expect(parseEnvFile(readFileSync(file, 'utf8')).FIELDGATE_WEB_PASSWORD_HASH).toMatch(/^scrypt:/);
  });

  it('refuses a short password and bad arguments without touching the file', async () => {
    const file = envFile('A=1\n');
    expect((await passwd(['--env-file', file], 'short\n')).code).toBe(64);
    expect((await passwd(['--file', file], 'a long enough password\n')).code).toBe(64);
    expect(readFileSync(file, 'utf8')).toBe('A=1\n');
  });

  it('keeps the file\'s owner and group (the package\'s root:root, or an admin\'s), makes it 0600, and writes through a symbolic link', skipUnless(process.getuid?.() === 0, 'needs root to give the file another owner'), async () => {
    const file = envFile('A=1\n');
    chownSync(file, 65534, 65534);
    chmodSync(file, 0o644);
    const link = join(file, '..', 'link.env');
    symlinkSync(file, link);
    expect((await passwd(['--env-file', link], 'a long enough password\n')).code).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    const after = statSync(file);
    expect([after.uid, after.gid, after.mode & 0o7777]).toEqual([65534, 65534, 0o600]);
    expect(parseEnvFile(readFileSync(file, 'utf8'))).toMatchObject({ A: '1', FIELDGATE_WEB_PASSWORD_HASH: expect.stringMatching(/^scrypt:/) });
    expect(readdirSync(join(file, '..')).sort()).toEqual(['fieldgate.env', 'link.env']);
  });

  it('reads the file by systemd\'s rules: a continued or quoted line is another variable\'s, and a file it cannot safely extend is left alone', async () => {
    const tricky = 'A=x\\\nFIELDGATE_WEB_PASSWORD_HASH=part-of-A\nB="y\nFIELDGATE_WEB_PASSWORD_HASH=part-of-B"\n';
    const file = envFile(tricky);
    expect((await passwd(['--env-file', file], 'a long enough password\n')).code).toBe(0);
    const vars = parseEnvFile(readFileSync(file, 'utf8'));
    expect(vars).toMatchObject({ A: 'xFIELDGATE_WEB_PASSWORD_HASH=part-of-A', B: 'y\nFIELDGATE_WEB_PASSWORD_HASH=part-of-B' });
    expect(vars.FIELDGATE_WEB_PASSWORD_HASH).toMatch(/^scrypt:/);
    const open = envFile('LOG_LEVEL=info\nA="never closed\n');
    const refused = await passwd(['--env-file', open], 'a long enough password\n');
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('cannot be rewritten without changing another variable');
    expect(readFileSync(open, 'utf8')).toBe('LOG_LEVEL=info\nA="never closed\n');
    expect(readdirSync(join(open, '..'))).toEqual(['fieldgate.env']);
  });

  it('the page is off without a port, and on loopback with a port alone', () => {
    expect(validateGateway({}, {}).gateway?.web).toBeUndefined();
    expect(validateGateway({ web: { port: 8080 } }, {}).gateway?.web).toMatchObject({ port: 8080, address: '127.0.0.1' });
    expect(validateGateway({ web: { port: 8080 } }, {}).gateway?.web?.passwordHash).toBeUndefined();
  });
});
