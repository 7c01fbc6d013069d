// No input crashes validation: every value of a valid site replaced by every kind of wrong value.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkConfig } from '../../../src/ops/site-file.js';
import { validateSite } from '../../../src/core/config/site.js';

const full = JSON.parse(readFileSync(fileURLToPath(new URL('../../fixtures/config/valid/full.json', import.meta.url)), 'utf8')) as unknown;
const WRONG: unknown[] = [null, [], {}, 'x', '', -1, 0, 1.5, 1e308, true, [1, 2], { a: { b: { c: 1 } } }, '__proto__'];

/** Every path to a value inside `value`, as lists of keys. */
function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== 'object' || value === null) return [prefix];
  const keys: (string | number)[] = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
  return [prefix, ...keys.flatMap((key) => paths((value as Record<string | number, unknown>)[key], [...prefix, key]))];
}

function replaced(root: unknown, path: (string | number)[], replacement: unknown): unknown {
  const copy = structuredClone(root) as Record<string | number, unknown>;
  if (path.length === 0) return replacement;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[path[path.length - 1]] = replacement;
  return copy;
}

describe('validation never throws', () => {
  const all = paths(full);

  it('accepts the untouched site', () => {
    expect(checkConfig(full, {}).issues).toEqual([]);
  });

  it(`answers ${all.length} paths x ${WRONG.length} wrong values with a result`, () => {
    const silent: string[] = [];
    let rejected = 0;
    for (const path of all) {
      for (const wrong of WRONG) {
        // The gateway section needs convict (slower to build); the rest goes through the pure validator.
        const raw = replaced(full, path, wrong);
        const { issues, ...result } = path[0] === 'gateway' || path.length === 0 ? checkConfig(raw, {}) : validateSite(raw);
        const accepted = Object.values(result).some((value) => value !== undefined);
        if (!accepted && (issues.length === 0 || issues.some((issue) => issue.message.length === 0))) {
          silent.push(`${path.join('.')} = ${JSON.stringify(wrong)}`);
        }
        if (issues.length > 0) rejected++;
      }
    }
    expect(silent).toEqual([]);
    expect(rejected).toBeGreaterThan(all.length);
  });

  it('treats __proto__ keys as unknown keys, not as prototypes', () => {
    const raw = JSON.parse('{"buses": [{"name": "plc", "kind": "tcp", "host": "127.0.0.1", "__proto__": {"polluted": 1}}], "devices": []}') as unknown;
    expect(checkConfig(raw, {}).issues).toEqual([{ path: 'buses[0].__proto__', message: 'unknown key' }]);
    expect(({} as { polluted?: number }).polluted).toBeUndefined();
  });
});
