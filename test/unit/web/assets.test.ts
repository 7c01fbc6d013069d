// The page's files ship embedded in the code: the embedded copy must be the files' current text,
// and the page stays small and free of inline scripts and outside addresses.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { embeddedAssetsSource } from '../../../src/ops/web/asset-files.js';
import { ASSETS, SHELL_HTML } from '../../../src/ops/web/assets.js';

const DIR = fileURLToPath(new URL('../../../src/ops/web/', import.meta.url));

describe('embedded page assets', () => {
  it('match src/ops/web/assets/ (run npx tsx scripts/web-assets.ts after editing them)', () => {
    const expected = embeddedAssetsSource((name) => readFileSync(`${DIR}assets/${name}`, 'utf8'));
    expect(readFileSync(`${DIR}assets-embedded.ts`, 'utf8')).toBe(expected);
  });

  it('are a few tens of KB, load nothing from elsewhere, and the shell has no inline script or style', () => {
    const total = SHELL_HTML.length + [...ASSETS.values()].reduce((sum, a) => sum + a.body.length, 0);
    expect(total).toBeLessThan(64 * 1024);
    const html = SHELL_HTML.toString('utf8');
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)/);
    expect(html).not.toMatch(/<style|\sstyle=|\son\w+=/);
    for (const asset of [html, ...[...ASSETS.values()].map((a) => a.body.toString('utf8'))]) expect(asset).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
    expect([...ASSETS.keys()].sort()).toEqual(['/assets/add.js', '/assets/app.css', '/assets/app.js']);
  });
});
