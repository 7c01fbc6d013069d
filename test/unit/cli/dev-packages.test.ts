// The emulator and the simulator are development packages: the daemon must run without them, and
// their commands must say so in one line when the service install left them out.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { devCommand, importDevModule, missingDevPackage } from '../../../src/cli/dev-packages.js';
import { EXIT_UNAVAILABLE, type CliIo } from '../../../src/cli/io.js';

const outside = mkdtempSync(join(tmpdir(), 'fieldgate-dev-packages-'));
afterAll(() => rmSync(outside, { recursive: true, force: true }));

/** The error plain Node gives for an import of `specifier` from a directory without node_modules. */
function nodeImportError(specifier: string): Error {
  const script = `try { await import(${JSON.stringify(specifier)}); console.log('{}'); } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: outside, encoding: 'utf8' });
  const { code, message } = JSON.parse(child.stdout) as { code?: string; message?: string };
  return Object.assign(new Error(message), { code });
}

function captureIo(): { io: CliIo; err: () => string } {
  const stderr = new PassThrough();
  let err = '';
  stderr.on('data', (chunk: Buffer) => { err += chunk.toString('utf8'); });
  return { io: { stdout: new PassThrough(), stderr, env: {} }, err: () => err };
}

describe('a missing development package', () => {
  it.each([
    ['@fieldgate/emulator', '@fieldgate/emulator'],
    ['@fieldgate/emulator/cli', '@fieldgate/emulator'],
    ['@fieldgate/simulator', '@fieldgate/simulator'],
    ['@fieldgate/simulator/cli', '@fieldgate/simulator'],
  ])('is recognised in Node\'s error for import(%s)', (specifier, expected) => {
    const err = nodeImportError(specifier);
    expect(Reflect.get(err, 'code')).toBe('ERR_MODULE_NOT_FOUND');
    expect(missingDevPackage(err)).toBe(expected);
  });

  it.each([
    ['another missing package', nodeImportError('aedes-lookalike')],
    ['a package whose name only starts like one', nodeImportError('@fieldgate/emulator-extra')],
    ['a missing relative module', nodeImportError('./gone.js')],
    ['an error of another kind', new TypeError('boom')],
    ['something thrown that is no error', '@fieldgate/emulator'],
  ])('is not claimed for %s', (_name, err) => {
    expect(missingDevPackage(err)).toBeUndefined();
  });

  it('answers the command with one line on stderr and exit 69', async () => {
    const { io, err } = captureIo();
    const error = nodeImportError('@fieldgate/emulator/cli');
    let ran = false;
    const command = devCommand('emulator', async () => { ran = true; throw error; });
    expect(await command(['--http-port', '0'], io)).toBe(EXIT_UNAVAILABLE);
    expect(ran).toBe(true);
    expect(err()).toBe('fieldgate emulator: @fieldgate/emulator is a development package, not part of the service install: install with npm ci (without --omit=dev)\n');
  });

  it('lets any other import failure through, as it is', async () => {
    const { io, err } = captureIo();
    const other = nodeImportError('aedes-lookalike');
    await expect(importDevModule('demo', io, async () => { throw other; })).rejects.toBe(other);
    expect(err()).toBe('');
  });

  it('loads the module when the package is there (this checkout)', async () => {
    const { io } = captureIo();
    const cli = await importDevModule('emulator', io, () => import('@fieldgate/emulator/cli'));
    expect(typeof cli?.runEmulator).toBe('function');
  });
});

/** Every .ts file under dir. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('the daemon without its development packages', () => {
  it('imports them statically only in the demo, and dynamically only through the dev-command loaders', () => {
    const staticImports: string[] = [];
    const dynamicImports: string[] = [];
    for (const file of sources('src')) {
      const text = readFileSync(file, 'utf8');
      if (/^import [^;]*from '@fieldgate\//m.test(text)) staticImports.push(file);
      if (/import\('@fieldgate\//.test(text)) dynamicImports.push(file);
    }
    expect(staticImports).toEqual(['src/demo/demo.ts']);
    expect(dynamicImports).toEqual(['src/cli.ts']);
    expect(readFileSync('src/cli/demo.ts', 'utf8')).toContain("importDevModule('demo', io, () => import('../demo/demo.js'))");
  });

  it('does not list aedes or the packages among its own dependencies', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string>; workspaces: string[] };
    expect(Object.keys(pkg.dependencies)).not.toContain('aedes');
    expect(Object.keys(pkg.dependencies).filter((name) => name.startsWith('@fieldgate/'))).toEqual([]);
    expect(pkg.workspaces).toEqual(['packages/emulator', 'packages/simulator']);
    const emulator = JSON.parse(readFileSync('packages/emulator/package.json', 'utf8')) as { dependencies: Record<string, string> };
    expect(emulator.dependencies.aedes).toBeDefined();
  });
});
