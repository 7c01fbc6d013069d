// Embeds the commissioning page's files (src/ops/web/assets/) into src/ops/web/assets-embedded.ts,
// so the page ships inside the code (also in the esbuild bundle) and nothing is read from disk
// or fetched at run time. Run after editing an asset: npx tsx scripts/web-assets.ts
// (test/unit/web/assets.test.ts fails while the embedded copy is stale).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { embeddedAssetsSource } from '../src/ops/web/asset-files.js';

const dir = fileURLToPath(new URL('../src/ops/web/', import.meta.url));
writeFileSync(`${dir}assets-embedded.ts`, embeddedAssetsSource((name) => readFileSync(`${dir}assets/${name}`, 'utf8')));
