// Hostile: every placeholder the site-file page hands out moved into every scalar position of the
// file (keys too, quoted and bare), then Check and Apply: no answer carries a secret, whole, JSON-
// escaped or as a cut quote. The validator's messages quote values; the redaction must hold anyway.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isScalar, parseDocument, visit } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../../src/core/config/config.js';
import { silentLogger } from '../../../src/ops/log.js';
import { loadConfigWithDigest } from '../../../src/ops/site-file.js';
import { SiteFileView } from '../../../src/ops/web/site-view.js';
import type { ReloadCandidate } from '../../../src/ops/gateway-handle.js';
import { SiteChanges } from '../../../src/ops/site-changes.js';
import { openSiteGenerations } from '../../../src/ops/site-store.js';
import { readSiteFile } from '../../../src/ops/site-file-reader.js';
import { systemTime } from '../../../src/core/time.js';

const SECRETS = {
  projectKey: 'pk-7Qm2xW9vR4tY8uZ1',
  brokerPassword: 'brk-pass-5Hj8Kl2',
  identityToken: 'gw-identity-token-3Df6Gh9J',
  longToken: 'meter-token-aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5',
  shortToken: 'ab9c',
  passwordHash: 'scrypt:16384:8:1:c2FsdHNhbHRzYWx0c2FsdA:aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g',
};
/** Any 12 characters of a long secret count as a leak too (a message cuts long quotes). */
function leaks(answer: string): string[] {
  const found: string[] = [];
  for (const secret of Object.values(SECRETS)) {
    if (answer.includes(secret) || answer.includes(JSON.stringify(secret).slice(1, -1))) found.push(secret);
    else if (secret.length >= 16) {
      for (let i = 0; i + 12 <= secret.length; i++) if (answer.includes(secret.slice(i, i + 12))) { found.push(`${secret} (from ${i})`); break; }
    }
  }
  return found;
}

function siteText(stateDir: string): string {
  return [
    'gateway:', `  stateDir: ${stateDir}`, '  logLevel: warn', '  health: { enabled: false }',
    `  web: { port: 18080, passwordHash: "${SECRETS.passwordHash}" }`,
    '  cloud:', `    mqttUrl: mqtt://fieldgate:${SECRETS.brokerPassword}@127.0.0.1:1883`, '    apiBaseUrl: http://127.0.0.1:8081',
    `    projectKey: ${SECRETS.projectKey}`, '    syncPeriodMs: 0',
    `    identity: { accessToken: ${SECRETS.identityToken}, deviceKey: fieldgate-1 }`,
    'buses:', '  - { name: plant, kind: tcp, host: 127.0.0.1, port: 15020, timeoutMs: 500 }',
    'devices:',
    '  - name: meter-1', '    bus: plant', '    unitId: 1', '    pollIntervalMs: 1000', `    cloud: { accessToken: ${SECRETS.longToken} }`,
    '    points:', '      - { id: voltage, table: input, address: 0, type: uint16, scale: 0.1, unit: V }',
    '      - id: energy', '        table: holding', '        address: 10', '        type: uint32', '        writable: true',
    '  - name: meter-2', '    bus: plant', '    unitId: 2', `    cloud: { accessToken: "${SECRETS.shortToken}" }`,
    '    points:', '      - { id: current, table: input, address: 2, unit: A }', '',
  ].join('\n');
}

/** Every scalar of the text (keys and values) as [start, end) ranges. */
function scalarRanges(text: string): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  visit(parseDocument(text), {
    Scalar(_key, node) {
      if (isScalar(node) && node.range) ranges.push([node.range[0], node.range[1]]);
    },
  });
  return ranges;
}

describe('site-file page: placeholders moved everywhere', () => {
  let dir: string;
  let file: string;
  let config: Config;
  let view: SiteFileView;
  const reloads: string[] = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'fg-web-moved-'));
    file = join(dir, 'site.yaml');
    writeFileSync(file, siteText(dir));
    config = loadConfigWithDigest(file, {}).config;
    const start = openSiteGenerations(file, readFileSync(file), dir, systemTime.wallNow());
    const changes = new SiteChanges({
      store: start.store, book: start.book, startReason: start.reason, historyKept: 20, current: () => config,
      // The reload refuses, quoting the text it read (the newest generation written): what a reload's problems may say.
      reload: async (load: () => ReloadCandidate | Promise<ReloadCandidate>) => {
        const candidate = await load();
        const newest = readdirSync(start.store.dir).filter((f) => /^generation-\d+\.yaml$/.test(f)).sort((a, b) => Number(/\d+/.exec(b)?.[0]) - Number(/\d+/.exec(a)?.[0]))[0] ?? '';
        const text = readFileSync(join(start.store.dir, newest), 'utf8');
        reloads.push(text);
        return { outcome: 'refused', generation: 1, problems: [...candidate.issues, { path: file, message: `refused: ${text}` }] };
      },
      readFile: (path) => readSiteFile(path, {}), readSeed: () => ({ path: file, bytes: readFileSync(file) }),
      addressHolders: () => new Map(), busUp: () => true, linkUp: () => true, time: systemTime, log: silentLogger(), changed: () => undefined,
    });
    view = new SiteFileView({ changes, current: () => config, log: silentLogger(), maxSessions: 4 });
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('shows no secret, and Check and Apply answer none with any placeholder in any scalar position', async () => {
    const shown = view.show('session');
    expect(shown.ok).toBe(true);
    if (!shown.ok) throw new Error(shown.error);
    const text = String(shown.body.text);
    expect(leaks(JSON.stringify(shown))).toEqual([]);
    const placeholders = [...new Set(text.match(/\{\{secret-\d+\}\}/g) ?? [])];
    expect(placeholders.length, text).toBeGreaterThanOrEqual(Object.keys(SECRETS).length);
    const ranges = scalarRanges(text);
    expect(ranges.length).toBeGreaterThan(60);

    const leaked: string[] = [];
    let edits = 0;
    const started = performance.now();
    for (const [index, [start, end]] of ranges.entries()) {
      // Three placeholders bare, in turn (each visits every position's neighbours), one quoted and one glued to other text.
      const turn = (k: number) => placeholders[(index + k) % placeholders.length];
      for (const written of [turn(0), turn(1), turn(2), `"${turn(3)}"`, `x${turn(4)}`]) {
        {
          const edited = text.slice(0, start) + written + text.slice(end);
          const check = JSON.stringify(await view.check('session', edited));
          edits++;
          for (const l of leaks(check)) leaked.push(`check ${JSON.stringify(text.slice(start, end))} <- ${written}: ${l}`);
        }
      }
    }
    // Apply on a sample (each writes the file and reloads): the first and every seventh position.
    for (const [index, [start, end]] of ranges.entries()) {
      if (index % 7 !== 0) continue;
      const placeholder = placeholders[index % placeholders.length];
      const apply = JSON.stringify(await view.apply('session', text.slice(0, start) + placeholder + text.slice(end)));
      for (const l of leaks(apply)) leaked.push(`apply ${JSON.stringify(text.slice(start, end))} <- ${placeholder}: ${l}`);
    }
    expect(leaked.slice(0, 20)).toEqual([]);
    expect(edits).toBeGreaterThan(300);
    console.log(`${edits} checks in ${Math.round(performance.now() - started)} ms`);
    // A valid edit is applied with the secrets back in: the reload read the real values.
    const valid = JSON.stringify(await view.apply('session', text.replace('pollIntervalMs: 1000', 'pollIntervalMs: 2000')));
    expect(leaks(valid)).toEqual([]);
    expect(reloads.some((r) => r.includes(SECRETS.projectKey) && r.includes(SECRETS.longToken))).toBe(true);
  }, 600_000);
});
