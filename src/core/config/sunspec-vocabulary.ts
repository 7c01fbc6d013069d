// SunSpec point names and the point vocabulary (docs/profiles.md, "SunSpec names and the vocabulary"):
// the sunspec-* profiles keep the model definitions' names (W, PhVphA, TotWhImp), scaled by their
// factors in the models' units; this table says which vocabulary quantity each one is, and by what
// factor its unit becomes the vocabulary's (pure data).

/** Models whose points share one mapping (101-103 inverters, 201-204 meters). */
export type SunSpecModelGroup = 'inverter' | 'meter' | 'storage' | 'mppt';

export interface SunSpecVocabularyEntry {
  /** The SunSpec point name (in sunspec-mppt, the first module's, M1_). */
  point: string;
  /** The vocabulary name the value is. */
  quantity: string;
  /** Value in the vocabulary's unit = SunSpec value x factor (Wh -> kWh 0.001, Pct -> ratio 0.01). */
  factor: number;
  /** Where the sign comes from, for a quantity with a direction. */
  sign?: string;
}

export const SUNSPEC_MODEL_GROUPS: Readonly<Record<number, SunSpecModelGroup>> = {
  101: 'inverter', 102: 'inverter', 103: 'inverter', 201: 'meter', 202: 'meter', 203: 'meter', 204: 'meter', 124: 'storage', 160: 'mppt',
};

/**
 * Models with no vocabulary quantity: ratings, settings and controls (120 nameplate, 121 basic
 * settings, 123 immediate controls) and the common model (1). Their points are limits and set-points,
 * never measurements.
 */
export const SUNSPEC_MODELS_WITHOUT_QUANTITIES: readonly number[] = [1, 120, 121, 123];

const PHASES = [['A', 'l1'], ['B', 'l2'], ['C', 'l3']] as const;

// The model definitions give no direction for W; these say whose words settle it.
const INVERTER_W_SIGN = 'model 10x W is "AC Power" of the inverter: its output, positive while it delivers';
const METER_W_SIGN = 'the models give none: the maker\'s (Fronius 42,0410,2049, Meter Model, page 96: at location grid, positive while consuming from the grid, the vocabulary\'s import positive)';

const ONE = 1;
const WH_TO_KWH = 0.001;
const PERCENT_TO_RATIO = 0.01;

const entry = (point: string, quantity: string, factor = ONE, sign?: string): SunSpecVocabularyEntry => ({ point, quantity, factor, ...(sign ? { sign } : {}) });

export const SUNSPEC_VOCABULARY: Readonly<Record<SunSpecModelGroup, readonly SunSpecVocabularyEntry[]>> = {
  inverter: [
    ...PHASES.map(([s, p]) => entry(`Aph${s}`, `current_${p}`)),
    entry('PPVphAB', 'voltage_l1_l2'), entry('PPVphBC', 'voltage_l2_l3'), entry('PPVphCA', 'voltage_l3_l1'),
    ...PHASES.map(([s, p]) => entry(`PhVph${s}`, `voltage_${p}`)),
    entry('W', 'ac_power', ONE, INVERTER_W_SIGN),
    entry('Hz', 'frequency'), entry('VA', 'apparent_power_total'), entry('VAr', 'reactive_power_total'),
    entry('PF', 'power_factor_total', PERCENT_TO_RATIO),
    entry('WH', 'ac_energy_total', WH_TO_KWH),
    entry('DCW', 'pv_power'),
    entry('TmpCab', 'internal_temperature'),
  ],
  meter: [
    ...PHASES.map(([s, p]) => entry(`Aph${s}`, `current_${p}`)),
    ...PHASES.map(([s, p]) => entry(`PhVph${s}`, `voltage_${p}`)),
    entry('PhVphAB', 'voltage_l1_l2'), entry('PhVphBC', 'voltage_l2_l3'), entry('PhVphCA', 'voltage_l3_l1'),
    entry('PhV', 'voltage_ln_avg'), entry('PPV', 'voltage_ll_avg'),
    entry('Hz', 'frequency'),
    entry('W', 'power_total', ONE, METER_W_SIGN),
    ...PHASES.map(([s, p]) => entry(`Wph${s}`, `power_${p}`, ONE, METER_W_SIGN)),
    entry('VA', 'apparent_power_total'), ...PHASES.map(([s, p]) => entry(`VAph${s}`, `apparent_power_${p}`)),
    entry('VAR', 'reactive_power_total'), ...PHASES.map(([s, p]) => entry(`VARph${s}`, `reactive_power_${p}`)),
    entry('PF', 'power_factor_total', PERCENT_TO_RATIO), ...PHASES.map(([s, p]) => entry(`PFph${s}`, `power_factor_${p}`, PERCENT_TO_RATIO)),
    entry('TotWhImp', 'import_energy', WH_TO_KWH), entry('TotWhExp', 'export_energy', WH_TO_KWH),
    ...PHASES.flatMap(([s, p]) => [entry(`TotWhImpPh${s}`, `import_energy_${p}`, WH_TO_KWH), entry(`TotWhExpPh${s}`, `export_energy_${p}`, WH_TO_KWH)]),
  ],
  storage: [
    entry('ChaState', 'battery_soc'),
    entry('InBatV', 'battery_voltage'),
  ],
  mppt: [
    entry('M1_DCA', 'pv1_current'), entry('M1_DCV', 'pv1_voltage'), entry('M1_DCW', 'pv1_power'),
  ],
};

/** The mapping for a SunSpec model number, or undefined for a model whose points are no vocabulary quantity. */
export function sunspecVocabulary(model: number): readonly SunSpecVocabularyEntry[] | undefined {
  const group = SUNSPEC_MODEL_GROUPS[model];
  return group ? SUNSPEC_VOCABULARY[group] : undefined;
}
