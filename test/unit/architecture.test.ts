// Guards the layering of src/ (ARCHITECTURE.md): every relative import, static or dynamic, must go
// to a folder its own folder may use. core is pure and imports only core; os (the libc calls Node
// lacks) imports nothing; the adapters (field, cloud) import only core (field also os); device
// orchestrates core, field and cloud; the bus share (share/, a room of its own: it works per bus)
// uses core, field and device's point read-back; ops may use anything below; cli and the entry
// files at the top of src/ may use everything.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve('src');
const BELOW_OPS = ['core', 'os', 'field', 'cloud', 'device', 'share'];

/** Folders each layer may import from (its own included). */
const ALLOWED: Record<string, readonly string[]> = {
  core: ['core'],
  os: ['os'],
  field: ['core', 'os', 'field'],
  cloud: ['core', 'cloud'],
  device: ['core', 'field', 'cloud', 'device'],
  share: ['core', 'field', 'device', 'share'],
  ops: [...BELOW_OPS, 'ops'],
};
/** Layers with no rule here: entry points and tools (anything), and the emulator and simulator
 * (packages of their own, checked by their own builds). */
const UNCHECKED = new Set(['<root>', 'cli', 'demo', 'emulator', 'simulator']);

/**
 * Edges still waiting for another change, each with the reason. An entry that no longer exists
 * fails the test, so the list only ever shrinks.
 */
const KNOWN_EXCEPTIONS: ReadonlyArray<{ from: string; to: string; why: string }> = [
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Relative specifiers of `import ... from`, `export ... from`, bare `import '...'` and `import('...')`. */
export function relativeImports(text: string): string[] {
  const found: string[] = [];
  const patterns = [/\bfrom\s+'(\.[^']*)'/g, /\bimport\s+'(\.[^']*)'/g, /\bimport\(\s*'(\.[^']*)'\s*\)/g];
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) found.push(match[1]);
  return found;
}

function layerOf(pathInSrc: string): string {
  const parts = pathInSrc.split('/');
  return parts.length === 1 ? '<root>' : parts[0];
}

interface Edge { from: string; to: string }

function edges(): Edge[] {
  return sourceFiles(SRC).flatMap((file) => {
    const from = relative(SRC, file);
    return relativeImports(readFileSync(file, 'utf8')).map((spec) => ({
      from, to: relative(SRC, resolve(dirname(file), spec)).replace(/\.js$/, '.ts'),
    }));
  });
}

describe('architecture: import directions in src/', () => {
  const all = edges();

  it('finds the imports it checks (the parser is not blind)', () => {
    expect(relativeImports("import type { A } from './a.js';\nexport { b } from '../b.js';\nimport './c.js';\nconst d = await import('./d.js');\nimport { e } from 'pino';"))
      .toEqual(['./a.js', '../b.js', './c.js', './d.js']);
    // Every layer is seen importing; os imports nothing of src/, so it is seen being imported.
    for (const layer of Object.keys(ALLOWED)) {
      expect(all.some((e) => layerOf(layer === 'os' ? e.to : e.from) === layer), layer).toBe(true);
    }
  });

  it('every layer imports only the layers it may use', () => {
    const isException = (e: Edge) => KNOWN_EXCEPTIONS.some((x) => x.from === e.from && x.to === e.to);
    const wrong = all
      .filter((e) => !UNCHECKED.has(layerOf(e.from)) && !isException(e))
      .filter((e) => !(ALLOWED[layerOf(e.from)] ?? []).includes(layerOf(e.to)))
      .map((e) => `${e.from} -> ${e.to}`);
    expect(wrong).toEqual([]);
  });

  it('the share room is used from outside only through its lifecycle and its status shape', () => {
    const doors = new Set(['share/shares.ts', 'share/share-status.ts']);
    const through = all.filter((e) => layerOf(e.to) === 'share' && layerOf(e.from) !== 'share');
    expect(through.length).toBeGreaterThan(0);
    expect(through.filter((e) => !doors.has(e.to)).map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
    // Its parts live in the room, not in the layers it uses (its pure site-file schema and policy stay in core).
    expect(all.filter((e) => /(^|\/)share-(server|service|status)\.ts$|(^|\/)shares\.ts$/.test(e.to) && layerOf(e.to) !== 'share').map((e) => e.to)).toEqual([]);
  });

  it('every import stays inside src/', () => {
    expect(all.filter((e) => e.to.startsWith('..')).map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  it('every known exception still exists (remove it once fixed)', () => {
    const stale = KNOWN_EXCEPTIONS.filter((x) => !all.some((e) => e.from === x.from && e.to === x.to));
    expect(stale).toEqual([]);
  });
});

/** Files of `edges` that import themselves through a chain, type-only imports included (each cycle once, by its first file). */
function cycles(all: readonly Edge[], inside: string): string[][] {
  const next = new Map<string, string[]>();
  for (const e of all) if (e.from.startsWith(inside) && e.to.startsWith(inside)) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const found = new Map<string, string[]>();
  const walk = (path: string[]) => {
    for (const to of next.get(path[path.length - 1]) ?? []) {
      const at = path.indexOf(to);
      if (at >= 0) {
        const cycle = path.slice(at);
        const key = [...cycle].sort().join(' ');
        if (!found.has(key)) found.set(key, [...cycle, to]);
      } else {
        walk([...path, to]);
      }
    }
  };
  for (const file of next.keys()) walk([file]);
  return [...found.values()];
}

describe('architecture: no import circles', () => {
  it('finds a circle when there is one', () => {
    expect(cycles([{ from: 'x/a.ts', to: 'x/b.ts' }, { from: 'x/b.ts', to: 'x/a.ts' }, { from: 'x/b.ts', to: 'x/c.ts' }], 'x/')).toEqual([['x/a.ts', 'x/b.ts', 'x/a.ts']]);
  });

  it('src/core/config has none, type-only imports included (site-types.ts and compile.ts no longer import each other)', () => {
    expect(cycles(edges(), 'core/config/')).toEqual([]);
  });

  it('the share room and the forwarders have none (one pump, two packings, no way back)', () => {
    expect(cycles(edges(), 'share/')).toEqual([]);
    expect(cycles(edges(), 'cloud/forwarding/')).toEqual([]);
  });

  it('src/field/modbus and src/core/modbus have none, type-only imports included (bus-request.ts and bus-types.ts no longer import each other)', () => {
    expect(cycles(edges(), 'field/modbus/')).toEqual([]);
    expect(cycles(edges(), 'core/modbus/')).toEqual([]);
  });

  it('src/cloud/outbox has none, type-only imports included (salvage no longer run by the store, attach handed to the file)', () => {
    expect(cycles(edges(), 'cloud/outbox/')).toEqual([]);
  });
});
