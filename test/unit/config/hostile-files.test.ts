// Site files built to break the loader: huge, deep, wrong encoding; and the host checks run makes.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { caFileProblem, checkHost, stateDirProblem } from '../../../src/ops/host-checks.js';
import { ConfigError, loadConfig } from '../../../src/ops/site-file.js';
import { decodeSiteBytes, estimateDepth, SITE_TEXT_DEFAULTS } from '../../../src/core/config/text-guards.js';
import { makeTestCertificates } from '../../helpers/tls-certs.js';
import { canMount, mountTmpfs } from '../../system/storage-rig.js';
import { skipUnless } from '../../helpers/skips.js';

const dir = mkdtempSync(join(tmpdir(), 'fg-hostile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SITE = 'buses:\n  - { name: line1, kind: tcp, host: 127.0.0.1 }\ndevices:\n  - name: m\n    bus: line1\n    unitId: 1\n    points:\n      - { id: v, table: input, address: 0 }\n';

function issuesOf(file: string, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    loadConfig(file, env);
  } catch (err) {
    if (err instanceof ConfigError) return err.issues.map((i) => `${i.path.replace(file, '<file>')}: ${i.message}`);
    throw err;
  }
  return [];
}

function write(name: string, content: string | Buffer): string {
  const file = join(dir, name);
  writeFileSync(file, content);
  return file;
}

describe('estimateDepth', () => {
  it.each([
    ['a: 1\n', 1],
    ['a:\n  b:\n    c: 1\n', 3],
    ['a: [1, [2, [3]]]\n', 4],
    ['a:\n  - - - 1\n', 5],
    ['a: "[[[[[[" # [[[[\n', 1],
    ["a: '{{{{'\n", 1],
    ['{"a": {"b": [1, "]]]]"]}}', 4],
    ['# [[[[[[[[\na: 1\n', 1],
  ])('%j -> %i', (text, depth) => {
    expect(estimateDepth(text).depth).toBe(depth);
  });

  it('keeps every shipped site file far under the limit', async () => {
    const { readFileSync, readdirSync } = await import('node:fs');
    const root = new URL('../../../', import.meta.url);
    const files = ['config/site.example.yaml', 'config/demo.yaml', ...readdirSync(new URL('test/fixtures/config/valid/', root)).map((f) => `test/fixtures/config/valid/${f}`)];
    for (const file of files) expect(estimateDepth(readFileSync(new URL(file, root), 'utf8')).depth, file).toBeLessThanOrEqual(16);
  });
});

describe('decodeSiteBytes', () => {
  it.each([
    ['UTF-16 LE with BOM', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a: 1\n', 'utf16le')]), 'UTF-16'],
    ['UTF-16 BE with BOM', Buffer.from([0xfe, 0xff, 0, 0x61]), 'UTF-16'],
    ['UTF-16 LE without BOM', Buffer.from('a: 1\n', 'utf16le'), 'UTF-16'],
    ['Latin-1', Buffer.from([0x61, 0x3a, 0x20, 0xe9, 0x0a]), 'not UTF-8'],
    ['gzip', Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xff]), 'not UTF-8'],
    ['NUL inside', Buffer.from('a: 1\n\0\0b: 2\n'), 'NUL'],
  ])('refuses %s without quoting it', (_name, bytes, reason) => {
    const { text, issue } = decodeSiteBytes(bytes, 'f.yaml', SITE_TEXT_DEFAULTS);
    expect(text).toBeUndefined();
    expect(issue?.message).toContain(reason);
    expect(issue?.message).not.toContain('a: 1');
  });

  it('drops a UTF-8 byte order mark', () => {
    expect(decodeSiteBytes(Buffer.from('\uFEFFa: 1\n'), 'f.yaml', SITE_TEXT_DEFAULTS).text).toBe('a: 1\n');
  });
});

describe('loadConfig bounds', () => {
  it('refuses a file over the size limit without reading it whole', () => {
    const file = write('huge.yaml', `x: "${'a'.repeat(5 * 1024 * 1024)}"\n`);
    expect(issuesOf(file)).toEqual(['<file>: file is larger than the 4194304 byte limit (FIELDGATE_SITE_MAX_BYTES)']);
    expect(issuesOf(write('small.yaml', SITE), { FIELDGATE_SITE_MAX_BYTES: '100' })).toEqual(['<file>: file is larger than the 100 byte limit (FIELDGATE_SITE_MAX_BYTES)']);
  });

  it('refuses /dev/zero as a site file', () => {
    expect(issuesOf('/dev/zero', { FIELDGATE_SITE_MAX_BYTES: '65536' })).toEqual(['<file>: file is larger than the 65536 byte limit (FIELDGATE_SITE_MAX_BYTES)']);
  });

  it('takes the depth limit from FIELDGATE_SITE_MAX_DEPTH', () => {
    const file = write('site.yaml', SITE);
    expect(issuesOf(file)).toEqual([]);
    expect(issuesOf(file, { FIELDGATE_SITE_MAX_DEPTH: '3' })[0]).toMatch(/^<file>:\d+: nested more than 3 levels deep/);
  });

  it.each([['FIELDGATE_SITE_MAX_DEPTH', '0'], ['FIELDGATE_SITE_MAX_BYTES', 'lots']])('reports a bad %s=%s', (name, value) => {
    expect(issuesOf(write('site.yaml', SITE), { [name]: value })).toEqual([`${name}: must be a positive integer (got "${value}")`]);
  });

  it.each([
    ['3,000 nested block mappings', Array.from({ length: 3000 }, (_, i) => `${' '.repeat(i)}a:`).join('\n')],
    ['3,000 nested flow mappings', `a: ${'{b: '.repeat(3000)}1${'}'.repeat(3000)}`],
    ['100,000 nested JSON lists', `{"a": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`],
  ])('answers %s with a config error, never a stack overflow', (_name, text) => {
    const issues = issuesOf(write('deep.yaml', text), { FIELDGATE_SITE_MAX_BYTES: String(16 * 1024 * 1024) });
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(/nested more than 64 levels deep/);
  });

  it('still answers with a config error when the depth guard is lifted', () => {
    const text = `a: ${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const issues = issuesOf(write('deeper.yaml', text), { FIELDGATE_SITE_MAX_DEPTH: '1000000' });
    expect(issues.length).toBeGreaterThan(0);
  });
});

describe('host checks', () => {
  it('accepts a real CA file and a creatable state directory', () => {
    const certs = makeTestCertificates();
    try {
      expect(caFileProblem(certs.caFile)).toBeUndefined();
      expect(stateDirProblem(join(certs.dir, 'new', 'state'))).toBeUndefined();
      expect(stateDirProblem(certs.dir)).toBeUndefined();
    } finally {
      rmSync(certs.dir, { recursive: true, force: true });
    }
  });

  it.each([
    ['missing', () => join(dir, 'nope.pem'), 'cannot read the CA file: does not exist'],
    ['a directory', () => dir, 'is a directory, not a PEM file'],
    ['not PEM', () => write('key.txt', 'secret-key-material-never-echoed\n'), 'holds no PEM certificate'],
    ['a broken PEM', () => write('broken.pem', '-----BEGIN CERTIFICATE-----\nnot base64 secret-material\n-----END CERTIFICATE-----\n'), 'does not parse'],
  ])('names a CA file that is %s, without its contents', (_name, path, message) => {
    const problem = caFileProblem(path()) ?? '';
    expect(problem).toContain(message);
    expect(problem).not.toContain('secret-');
  });

  it('names a state directory that is a file, or lies under one', () => {
    const file = write('plain-file', 'x');
    expect(stateDirProblem(file)).toBe('is a file, not a directory');
    expect(stateDirProblem(join(file, 'state'))).toContain('a parent of it is a file');
    mkdirSync(join(dir, 'sub'), { recursive: true });
    expect(stateDirProblem(join(dir, 'sub', 'a', 'b'))).toBeUndefined();
  });

  it('a read-only filesystem is no config error: run starts and holds reports in memory (root: a real tmpfs)', skipUnless(canMount(), 'mounting a tmpfs needs root (CAP_SYS_ADMIN)'), () => {
    const fs = mountTmpfs(64);
    try {
      mkdirSync(join(fs.path, 'state'));
      execFileSync('mount', ['-o', 'remount,ro', fs.path]);
      expect(stateDirProblem(join(fs.path, 'state'))).toBeUndefined();
      expect(stateDirProblem(join(fs.path, 'not-yet', 'state'))).toBeUndefined();
    } finally {
      fs.dispose();
    }
  });

  it('reports both with their paths', () => {
    const issues = checkHost({ stateDir: write('state-file', 'x'), logLevel: 'info', health: { enabled: false, host: '127.0.0.1', port: 9180 }, cloud: { caFile: join(dir, 'missing.pem') } as never });
    expect(issues.map((i) => i.path)).toEqual(['gateway.stateDir', 'gateway.cloud.caFile']);
  });
});
