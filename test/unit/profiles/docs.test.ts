// docs/profiles.md stays true: its table lists every shipped profile, each with its source title.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadProfiles } from '../../../src/ops/profile-library.js';

const doc = readFileSync('docs/profiles.md', 'utf8');
const library = loadProfiles([]).library;

describe('docs/profiles.md', () => {
  it.each(library.names())('lists %s with its source', (name) => {
    const row = doc.split('\n').find((line) => line.startsWith(`| \`${name}\` |`));
    expect(row, `no table row for ${name}`).toBeDefined();
    expect(row).toContain(library.get(name)!.source.title);
    expect(row, 'its source quality').toContain(` | ${library.get(name)!.source.quality} | `);
  });

  it('lists no profile that is not shipped', () => {
    const listed = [...doc.matchAll(/^\| `([a-z0-9-]+)` \|/gm)].map((m) => m[1]).filter((name) => name.includes('-'));
    expect(listed.sort()).toEqual(library.names());
  });
});
