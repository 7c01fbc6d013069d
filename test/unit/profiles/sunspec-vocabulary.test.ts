// The SunSpec profiles keep the model definitions' point names; src/core/config/sunspec-vocabulary.ts
// says which vocabulary quantity each one is and by what factor its unit becomes the vocabulary's.
// Every shipped SunSpec model is either mapped or named as having no vocabulary quantity.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadProfiles } from '../../../src/ops/profile-library.js';
import { vocabularyQuantity } from '../../../src/core/config/point-vocabulary.js';
import { SUNSPEC_MODEL_GROUPS, SUNSPEC_MODELS_WITHOUT_QUANTITIES, SUNSPEC_VOCABULARY, sunspecVocabulary } from '../../../src/core/config/sunspec-vocabulary.js';

const library = loadProfiles([]).library;
const sunspecProfiles = library.names().filter((name) => library.get(name)!.sunspec);
const docs = readFileSync('docs/profiles.md', 'utf8');

/** The point names of a profile's model definition, from its manual table (the model's JSON, transcribed). */
function modelPoints(name: string): string[] {
  const table = JSON.parse(readFileSync(`test/fixtures/profiles/manual/${name}.json`, 'utf8')) as { points: { name: string }[] };
  return table.points.map((point) => point.name);
}

/** A model definition's unit (as the profiles carry it) -> the vocabulary's, and the factor between them. */
const UNIT_CHANGES: { from: string; to: string; factor: number }[] = [
  { from: 'Wh', to: 'kWh', factor: 0.001 },
  { from: '%', to: '', factor: 0.01 }, // a power factor in Pct
  { from: '%', to: '%', factor: 1 }, // a state of charge
  { from: 'degC', to: '°C', factor: 1 },
  ...['W', 'A', 'V', 'Hz', 'VA', 'var'].map((unit) => ({ from: unit, to: unit, factor: 1 })),
];

describe('SunSpec names and the vocabulary', () => {
  it('ships SunSpec profiles of mapped models and of models without quantities', () => {
    const models = sunspecProfiles.map((name) => library.get(name)!.sunspec!.model);
    expect(models.filter((model) => sunspecVocabulary(model)).length).toBeGreaterThan(0);
    expect(models.filter((model) => SUNSPEC_MODELS_WITHOUT_QUANTITIES.includes(model)).length).toBeGreaterThan(0);
  });

  it.each(sunspecProfiles)('%s: its model is mapped, or has no vocabulary quantity', (name) => {
    const model = library.get(name)!.sunspec!.model;
    const mapping = sunspecVocabulary(model);
    expect(mapping !== undefined || SUNSPEC_MODELS_WITHOUT_QUANTITIES.includes(model), `model ${model} is neither mapped nor listed without quantities`).toBe(true);
    expect(mapping !== undefined && SUNSPEC_MODELS_WITHOUT_QUANTITIES.includes(model)).toBe(false);
    if (!mapping) return;
    const points = new Map(library.get(name)!.points.map((point) => [point.id as string, point]));
    // A model of the group may lack a point (201, single phase, has no PhVphAB): then the definition lacks it too.
    const defined = new Set(modelPoints(name));
    for (const entry of mapping) {
      const point = points.get(entry.point);
      if (!defined.has(entry.point)) {
        expect(point, `${name} has ${entry.point}, which its model definition lacks`).toBeUndefined();
        continue;
      }
      expect(point, `${name} has no point ${entry.point}`).toBeDefined();
      const quantity = vocabularyQuantity(entry.quantity);
      expect(quantity, `${entry.quantity} is no vocabulary name`).toBeDefined();
      const change = UNIT_CHANGES.find((c) => c.from === point!.unit && c.to === quantity!.unit);
      expect(change, `${name} ${entry.point}: no unit change from ${String(point!.unit)} to ${quantity!.unit}`).toBeDefined();
      expect(entry.factor, `${name} ${entry.point} factor`).toBe(change!.factor);
      // A quantity with a direction says whose document gives it.
      if (quantity!.sign) expect(entry.sign, `${name} ${entry.point}: no sign source`).toMatch(/\S/);
    }
  });

  it('maps only points that some shipped model of the group defines', () => {
    for (const [group, entries] of Object.entries(SUNSPEC_VOCABULARY)) {
      const inGroup = sunspecProfiles.filter((name) => SUNSPEC_MODEL_GROUPS[library.get(name)!.sunspec!.model] === group);
      expect(inGroup.length, group).toBeGreaterThan(0);
      const defined = new Set(inGroup.flatMap(modelPoints));
      for (const entry of entries) expect(defined.has(entry.point), `${group} ${entry.point}`).toBe(true);
    }
  });

  it('maps each vocabulary quantity at most once per model group', () => {
    for (const entries of Object.values(SUNSPEC_VOCABULARY)) {
      const quantities = entries.map((entry) => entry.quantity);
      expect(new Set(quantities).size).toBe(quantities.length);
    }
  });

  it('docs/profiles.md lists every mapping', () => {
    for (const [group, entries] of Object.entries(SUNSPEC_VOCABULARY)) {
      for (const entry of entries) {
        const row = docs.split('\n').find((line) => line.startsWith(`| ${group} |`) && line.includes(`| \`${entry.point}\` |`) && line.includes(`| \`${entry.quantity}\` |`));
        expect(row, `docs/profiles.md has no row for ${group} ${entry.point} -> ${entry.quantity}`).toBeDefined();
      }
    }
  });
});
