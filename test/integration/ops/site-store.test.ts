// The generation store on a real directory: the start's choice written back, the seed copied in,
// a generation whose text is missing or altered on disk never run, a damaged book ignored.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addGeneration } from '../../../src/core/config/site-generations.js';
import { asEpoch } from '../../../src/core/time.js';
import { openSiteGenerations, sha256Of, SiteStore } from '../../../src/ops/site-store.js';

const T = asEpoch(1_800_000_000_000);
const SEED = Buffer.from('gateway: {}\n# seed\n');
const NEXT = 'gateway: {}\n# generation 2\n';

describe('site generation store', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fg-site-store-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A store whose last confirmed generation is 2 (NEXT), as a remote apply leaves it. */
  function withGeneration2(): SiteStore {
    const first = openSiteGenerations(join(dir, 'site.yaml'), SEED, dir, T);
    first.store.writeText(2, NEXT);
    first.store.save(addGeneration(first.book, { digest: sha256Of(NEXT), at: T, via: 'remote' }).book);
    return first.store;
  }

  it('first start: the seed is copied in as generation 1 and the book written', () => {
    const start = openSiteGenerations(join(dir, 'site.yaml'), SEED, dir, T);
    expect(start.file).toBe(join(dir, 'site', 'generation-1.yaml'));
    expect(readFileSync(start.file)).toEqual(SEED);
    expect(start.store.load()).toMatchObject({ running: 1, seedDigest: sha256Of(SEED) });
  });

  it('the last confirmed generation runs from its file', () => {
    withGeneration2();
    const start = openSiteGenerations(join(dir, 'site.yaml'), SEED, dir, T);
    expect(start).toMatchObject({ file: join(dir, 'site', 'generation-2.yaml'), run: { generation: 2 } });
  });

  it.each([
    ['altered on disk', (store: SiteStore) => writeFileSync(store.textPath(2), `${NEXT}# edited by hand\n`)],
    ['missing', (store: SiteStore) => store.removeText(2)],
  ])('a generation text %s is never run: the seed runs and says why', (_what, damage) => {
    damage(withGeneration2());
    const start = openSiteGenerations(join(dir, 'site.yaml'), SEED, dir, T);
    expect(start.run.digest).toBe(sha256Of(SEED));
    expect(start.reason).toMatch(/the text of generation 2 is missing or damaged/);
    expect(readFileSync(start.file)).toEqual(SEED);
  });

  it('a damaged book is no book: the seed runs as generation 1, its file rewritten with the seed', () => {
    withGeneration2();
    writeFileSync(join(dir, 'site', 'generations.json'), '{"records": [ broken');
    writeFileSync(join(dir, 'site', 'generation-1.yaml'), 'not the seed');
    const start = openSiteGenerations(join(dir, 'site.yaml'), SEED, dir, T);
    expect(start).toMatchObject({ run: { generation: 1 }, reason: 'the seed file (no generation applied since)' });
    expect(readFileSync(start.file)).toEqual(SEED);
  });
});
