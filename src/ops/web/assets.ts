// The page's files as served: built once from the embedded copies, looked up by exact path.
import { ASSET_FILES } from './asset-files.js';
import { EMBEDDED_ASSETS } from './assets-embedded.js';

export interface Asset {
  type: string;
  body: Buffer;
}

export const SHELL_HTML = Buffer.from(EMBEDDED_ASSETS['index.html'], 'utf8');

export const ASSETS: ReadonlyMap<string, Asset> = new Map(ASSET_FILES.filter((f) => f.name !== 'index.html')
  .map((f) => [`/assets/${f.name}`, { type: f.type, body: Buffer.from(EMBEDDED_ASSETS[f.name], 'utf8') }]));
