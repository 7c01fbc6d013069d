// Every shipped profile against the point vocabulary (src/core/config/point-vocabulary.ts,
// docs/profiles.md "Point vocabulary"): the vocabulary's names for its quantities, in its units,
// with signs that can carry its sign conventions; and the former ids a site file may still name.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadProfiles } from '../../../src/ops/profile-library.js';
import { VOCABULARY, VOCABULARY_ALIASES, checkVocabulary, vocabularyQuantity } from '../../../src/core/config/point-vocabulary.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateSite } from '../../../src/core/config/site.js';
import { loadConfig } from '../../../src/ops/site-file.js';
import { logRenamedPoints } from '../../../src/cli/site-loading.js';
import { runCli } from '../../helpers/run-cli.js';
import { captureLogger } from '../../helpers/capture-logger.js';

const library = loadProfiles([]).library;
const shipped = library.names();

/**
 * Points of shipped profiles that measure a vocabulary quantity but keep another name, and why:
 * the vocabulary's name would promise a sign the document does not give.
 */
const KEPT_NAMES: Record<string, Record<string, string>> = {
  // SmartLogger ModBus Interface Definitions Issue 35: Table 2-5 rows 10 and 36-38, no sign anywhere in the document.
  'huawei-smartlogger-meter': Object.fromEntries(['active_power', 'active_power_l1', 'active_power_l2', 'active_power_l3'].map((id) => [id, 'Table 2-5 does not say which direction is positive'])),
  // Sungrow SG protocol row 45 (5083-5084), in V1.1.53 and V1.1.37 alike: no sign.
  'sungrow-sg': { meter_power: 'the row transcribed (5083) does not say which direction is positive' },
};

describe('point vocabulary', () => {
  it('names each quantity once, and every alias stands for vocabulary names only', () => {
    const names = VOCABULARY.map((q) => q.name);
    expect(new Set(names).size).toBe(names.length);
    for (const [alias, meant] of Object.entries(VOCABULARY_ALIASES)) {
      expect(names, `alias ${alias} is itself a vocabulary name`).not.toContain(alias);
      for (const name of meant) expect(names, `alias ${alias} -> ${name}`).toContain(name);
    }
  });

  it('reads a meter through another device as meter_ + a meter name, never an inverter or battery name', () => {
    expect(vocabularyQuantity('meter_power_total')?.name).toBe('power_total');
    expect(vocabularyQuantity('meter_ac_power')).toBeUndefined();
    expect(checkVocabulary([{ id: 'meter_active_power', unit: 'W' }])[0].message).toContain('meter_power_total');
    expect(checkVocabulary([{ id: 'power_total', unit: 'kW' }])[0].message).toContain('is in W (got kW)');
    expect(checkVocabulary([{ id: 'power_factor_total' }, { id: 'board_temperature', unit: '°C' }])).toEqual([]);
  });

  it.each(shipped)('%s: its points use the vocabulary\'s names and units', (name) => {
    const kept = KEPT_NAMES[name] ?? {};
    const findings = checkVocabulary(library.get(name)!.points).filter((finding) => !(finding.id in kept));
    expect(findings.map((f) => `${f.id}: ${f.message}`)).toEqual([]);
    for (const id of Object.keys(kept)) expect(library.get(name)!.points.some((p) => p.id === id), `${name} no longer has ${id}`).toBe(true);
  });

  it.each(shipped)('%s: a battery quantity with a direction is read from a signed register', (name) => {
    for (const point of library.get(name)!.points) {
      const quantity = vocabularyQuantity(point.id as string);
      if (quantity?.group !== 'battery' || !quantity.sign) continue;
      expect(String(point.type), `${name} ${String(point.id)}`).not.toMatch(/^uint/);
    }
  });

  it('docs/profiles.md lists every vocabulary name with its unit', () => {
    const docs = readFileSync(fileURLToPath(new URL('../../../docs/profiles.md', import.meta.url)), 'utf8');
    for (const quantity of VOCABULARY) {
      const row = docs.split('\n').find((line) => line.startsWith('| ') && line.includes(`\`${quantity.name}\``));
      expect(row, `docs/profiles.md has no row for ${quantity.name}`).toBeDefined();
      if (quantity.unit) expect(row, `${quantity.name} unit`).toContain(`| ${quantity.unit} |`);
    }
  });
});

describe('former point ids (renamed by the vocabulary)', () => {
  const renamedProfiles = shipped.filter((name) => library.get(name)!.renamed);

  it('the profiles that renamed points say so, and each former id maps to a current point', () => {
    expect(renamedProfiles).toContain('carlogavazzi-em24-e1');
    for (const name of renamedProfiles) {
      const ids = new Set(library.get(name)!.points.map((p) => p.id));
      for (const [formerly, now] of Object.entries(library.get(name)!.renamed!)) {
        expect(ids.has(formerly), `${name}: ${formerly} is still a point`).toBe(false);
        expect(ids.has(now), `${name}: ${formerly} -> ${now}`).toBe(true);
      }
    }
  });

  it.each(renamedProfiles)('%s: a site file naming former ids in exclude and points still validates, and says which', (name) => {
    const entries: [string, string][] = Object.entries(library.get(name)!.renamed!);
    const [excludedFormerly, excludedNow] = entries[0];
    const [overriddenFormerly, overriddenNow] = entries[1] ?? entries[0];
    const overrides = overriddenFormerly === excludedFormerly ? [] : [{ id: overriddenFormerly, report: { deadband: 5 } }];
    const raw = {
      buses: [{ name: 'b', kind: 'tcp', host: '127.0.0.1', port: 1502 }],
      devices: [{ name: 'd', bus: 'b', unitId: 1, profile: name, identify: false, exclude: [excludedFormerly], points: overrides }],
    };
    const { site, issues } = validateSite(raw, library);
    expect(issues).toEqual([]);
    const device = site!.devices[0];
    const ids = device.points.map((p) => p.id);
    expect(ids).not.toContain(excludedNow);
    expect(ids).not.toContain(excludedFormerly);
    if (overrides.length > 0) {
      expect(ids).toContain(overriddenNow);
      expect(ids).not.toContain(overriddenFormerly);
    }
    expect(device.renamedPoints?.map((r) => [r.formerly, r.now, r.path])).toEqual([
      [excludedFormerly, excludedNow, 'devices[0].exclude[0]'],
      ...(overrides.length > 0 ? [[overriddenFormerly, overriddenNow, 'devices[0].points[0].id']] : []),
    ]);
  });

  it('a current id is not reported as renamed, and a former id of another profile stays unknown', () => {
    const raw = {
      buses: [{ name: 'b', kind: 'tcp', host: '127.0.0.1', port: 1502 }],
      devices: [
        { name: 'd', bus: 'b', unitId: 1, profile: 'carlogavazzi-em24-e1', exclude: ['power_total'] },
        { name: 'e', bus: 'b', unitId: 2, profile: 'eastron-sdm630', exclude: ['output_power'] },
      ],
    };
    const { issues, site } = validateSite(raw, library);
    expect(site).toBeUndefined();
    expect(issues.map((i) => i.path)).toEqual(['devices[1].exclude[0]']);
  });

  it('a site file written for the former ids: validate warns with the path, run logs it once per use at start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fieldgate-renamed-'));
    try {
      const site = join(dir, 'site.yaml');
      writeFileSync(site, [
        'gateway:', `  stateDir: ${join(dir, 'state')}`,
        'buses:', '  - { name: b, kind: tcp, host: 127.0.0.1, port: 1502 }',
        'devices:',
        '  - { name: e1, bus: b, unitId: 1, profile: carlogavazzi-em24-e1, exclude: [power_factor], points: [{ id: power, report: { deadband: 50 } }] }',
      ].join('\n') + '\n');
      const validated = await runCli(['validate', site]);
      expect(validated.code).toBe(0);
      expect(validated.out).toContain('warning: devices[0].exclude[0]: profile carlogavazzi-em24-e1 renamed "power_factor" to "power_factor_total"');
      expect(validated.out).toContain('warning: devices[0].points[0].id: profile carlogavazzi-em24-e1 renamed "power" to "power_total"');
      const config = loadConfig(site, {});
      expect(config.site.devices[0].points.find((p) => p.id === 'power_total')?.report.deadband).toBe(50);
      const log = captureLogger();
      logRenamedPoints(config, log.logger);
      const warned = log.lines().filter((line) => line.msg === 'site file names a renamed profile point: read as its new id for this release');
      expect(warned.map((line) => [line.device, line.profile, line.formerly, line.now, line.level])).toEqual([
        ['e1', 'carlogavazzi-em24-e1', 'power_factor', 'power_factor_total', 40],
        ['e1', 'carlogavazzi-em24-e1', 'power', 'power_total', 40],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
