// One point vocabulary for every profile (docs/profiles.md, "Point vocabulary"): the names, units
// and sign conventions of the quantities meters, inverters, batteries and sensors have in common,
// so a dashboard or a cloud rule written for one device works for the next (pure data).

export type VocabularyGroup = 'meter' | 'inverter' | 'battery' | 'environment';

export interface VocabularyQuantity {
  name: string;
  /** The unit the value is reported in ('' for a ratio such as a power factor). */
  unit: string;
  group: VocabularyGroup;
  meaning: string;
  /** What a positive value means, where a quantity has a direction. */
  sign?: string;
}

/** A meter read through another device (an inverter's grid meter) uses a meter's names after this prefix. */
export const THROUGH_METER_PREFIX = 'meter_';

const PHASES = ['l1', 'l2', 'l3'] as const;
const METER_IMPORT_POSITIVE = 'import positive (the way the import counter counts), export negative';
const INVERTER_OUTPUT_POSITIVE = 'positive when the inverter delivers power';
const BATTERY_CHARGE_POSITIVE = 'charging positive, discharging negative';

function q(group: VocabularyGroup, name: string, unit: string, meaning: string, sign?: string): VocabularyQuantity {
  return { name, unit, group, meaning, ...(sign ? { sign } : {}) };
}

/** A total and its three phases (`power_total`, `power_l1` ...). */
function phased(group: VocabularyGroup, stem: string, unit: string, meaning: string, sign?: string, total = `${stem}_total`): VocabularyQuantity[] {
  return [q(group, total, unit, `${meaning}, all phases`, sign), ...PHASES.map((phase) => q(group, `${stem}_${phase}`, unit, `${meaning}, phase ${phase.toUpperCase()}`, sign))];
}

const METER: VocabularyQuantity[] = [
  ...PHASES.map((p) => q('meter', `voltage_${p}`, 'V', `voltage phase ${p.toUpperCase()} to neutral`)),
  q('meter', 'voltage_l1_l2', 'V', 'voltage between phases L1 and L2'),
  q('meter', 'voltage_l2_l3', 'V', 'voltage between phases L2 and L3'),
  q('meter', 'voltage_l3_l1', 'V', 'voltage between phases L3 and L1'),
  q('meter', 'voltage_ln_avg', 'V', 'average phase-to-neutral voltage'),
  q('meter', 'voltage_ll_avg', 'V', 'average phase-to-phase voltage'),
  q('meter', 'voltage', 'V', 'voltage of a single-phase device'),
  ...PHASES.map((p) => q('meter', `current_${p}`, 'A', `current phase ${p.toUpperCase()}`)),
  q('meter', 'current_n', 'A', 'neutral current'),
  q('meter', 'current_avg', 'A', 'average phase current'),
  q('meter', 'current', 'A', 'current of a single-phase device'),
  ...phased('meter', 'power', 'W', 'active power', METER_IMPORT_POSITIVE),
  ...phased('meter', 'apparent_power', 'VA', 'apparent power'),
  // Their signs are the device's own (its profile's source notes say where the document defines them).
  ...phased('meter', 'reactive_power', 'var', 'reactive power'),
  ...phased('meter', 'power_factor', '', 'power factor'),
  q('meter', 'frequency', 'Hz', 'line frequency'),
  q('meter', 'import_energy', 'kWh', 'active energy imported, lifetime counter'),
  q('meter', 'export_energy', 'kWh', 'active energy exported, lifetime counter'),
  ...PHASES.flatMap((p) => [q('meter', `import_energy_${p}`, 'kWh', `active energy imported, phase ${p.toUpperCase()}`), q('meter', `export_energy_${p}`, 'kWh', `active energy exported, phase ${p.toUpperCase()}`)]),
  q('meter', 'total_energy', 'kWh', 'active energy imported plus exported'),
  q('meter', 'import_reactive_energy', 'kvarh', 'reactive energy imported, lifetime counter'),
  q('meter', 'export_reactive_energy', 'kvarh', 'reactive energy exported, lifetime counter'),
  q('meter', 'total_reactive_energy', 'kvarh', 'reactive energy imported plus exported'),
  q('meter', 'apparent_energy', 'kVAh', 'apparent energy, lifetime counter'),
];

const INVERTER: VocabularyQuantity[] = [
  q('inverter', 'ac_power', 'W', 'active power on the AC side, all phases', INVERTER_OUTPUT_POSITIVE),
  ...PHASES.map((p) => q('inverter', `ac_power_${p}`, 'W', `active power on the AC side, phase ${p.toUpperCase()}`, INVERTER_OUTPUT_POSITIVE)),
  q('inverter', 'ac_energy_today', 'kWh', 'energy delivered on the AC side today'),
  q('inverter', 'ac_energy_total', 'kWh', 'energy delivered on the AC side, lifetime counter'),
  q('inverter', 'pv_power', 'W', 'DC input power of all PV inputs'),
  ...[1, 2, 3, 4].flatMap((n) => [
    q('inverter', `pv${n}_voltage`, 'V', `PV input ${n} voltage (string or MPPT, as the device numbers them)`),
    q('inverter', `pv${n}_current`, 'A', `PV input ${n} current`),
    q('inverter', `pv${n}_power`, 'W', `PV input ${n} power`),
  ]),
  q('inverter', 'pv_energy_today', 'kWh', 'PV energy generated today'),
  q('inverter', 'pv_energy_total', 'kWh', 'PV energy generated, lifetime counter'),
  q('inverter', 'internal_temperature', '°C', 'the inverter\'s internal (cabinet or heat-sink) temperature'),
];

const BATTERY: VocabularyQuantity[] = [
  q('battery', 'battery_power', 'W', 'battery power', BATTERY_CHARGE_POSITIVE),
  q('battery', 'battery_current', 'A', 'battery current', BATTERY_CHARGE_POSITIVE),
  q('battery', 'battery_voltage', 'V', 'battery voltage'),
  q('battery', 'battery_soc', '%', 'state of charge'),
  q('battery', 'battery_soh', '%', 'state of health'),
  q('battery', 'battery_temperature', '°C', 'battery temperature'),
  q('battery', 'battery_charge_energy_today', 'kWh', 'energy charged into the battery today'),
  q('battery', 'battery_charge_energy_total', 'kWh', 'energy charged into the battery, lifetime counter'),
  q('battery', 'battery_discharge_energy_today', 'kWh', 'energy discharged from the battery today'),
  q('battery', 'battery_discharge_energy_total', 'kWh', 'energy discharged from the battery, lifetime counter'),
];

const ENVIRONMENT: VocabularyQuantity[] = [
  q('environment', 'temperature', '°C', 'air temperature'),
  q('environment', 'humidity', '%', 'relative humidity'),
  q('environment', 'dew_point', '°C', 'dew point temperature'),
  q('environment', 'absolute_humidity', 'g/m³', 'absolute humidity'),
  q('environment', 'irradiance', 'W/m²', 'solar irradiance'),
  q('environment', 'module_temperature', '°C', 'PV module temperature'),
  q('environment', 'wind_speed', 'm/s', 'wind speed'),
];

export const VOCABULARY: readonly VocabularyQuantity[] = [...METER, ...INVERTER, ...BATTERY, ...ENVIRONMENT];

/**
 * Names profiles used for a vocabulary quantity before the vocabulary (and names common elsewhere):
 * a site profile using one is warned with the vocabulary's name. One alias may stand for two
 * quantities (`active_power` is a meter's `power_total` or an inverter's `ac_power`).
 */
export const VOCABULARY_ALIASES: Readonly<Record<string, readonly string[]>> = {
  power: ['power_total'],
  active_power: ['power_total', 'ac_power'],
  total_power: ['power_total'],
  ...Object.fromEntries(PHASES.map((p) => [`active_power_${p}`, [`power_${p}`]])),
  apparent_power: ['apparent_power_total'],
  reactive_power: ['reactive_power_total'],
  power_factor: ['power_factor_total'],
  pf: ['power_factor_total'],
  ...Object.fromEntries(PHASES.flatMap((p, i) => [[`voltage_${'abc'[i]}`, [`voltage_${p}`]], [`current_${'abc'[i]}`, [`current_${p}`]], [`pf_${p}`, [`power_factor_${p}`]]])),
  voltage_ab: ['voltage_l1_l2'], voltage_bc: ['voltage_l2_l3'], voltage_ca: ['voltage_l3_l1'],
  voltage_avg: ['voltage_ln_avg'],
  grid_frequency: ['frequency'], freq: ['frequency'],
  import_energy_total: ['import_energy'], export_energy_total: ['export_energy'],
  active_energy_import: ['import_energy'], active_energy_export: ['export_energy'],
  output_power: ['ac_power'], inverter_power: ['ac_power'],
  energy_today: ['ac_energy_today'], energy_total: ['ac_energy_total'],
  input_power: ['pv_power'], dc_power: ['pv_power'],
  ...Object.fromEntries([1, 2, 3, 4].flatMap((n) => [[`mppt${n}_voltage`, [`pv${n}_voltage`]], [`mppt${n}_current`, [`pv${n}_current`]], [`mppt${n}_power`, [`pv${n}_power`]]])),
  solar_energy_today: ['pv_energy_today'], solar_energy_total: ['pv_energy_total'],
  inverter_temperature: ['internal_temperature'], temperature_inverter: ['internal_temperature'],
  soc: ['battery_soc'], battery_level: ['battery_soc'], state_of_charge: ['battery_soc'],
  soh: ['battery_soh'], battery_health: ['battery_soh'],
  battery_charge_today: ['battery_charge_energy_today'], battery_charge_total: ['battery_charge_energy_total'],
  battery_discharge_today: ['battery_discharge_energy_today'], battery_discharge_total: ['battery_discharge_energy_total'],
  charge_today: ['battery_charge_energy_today'], charge_total: ['battery_charge_energy_total'],
  discharge_today: ['battery_discharge_energy_today'], discharge_total: ['battery_discharge_energy_total'],
  relative_humidity: ['humidity'], rh: ['humidity'], dewpoint: ['dew_point'],
};

const BY_NAME = new Map(VOCABULARY.map((quantity) => [quantity.name, quantity]));

/** The quantity a point id names, directly or as a meter read through another device (`meter_power_total`). */
export function vocabularyQuantity(id: string): VocabularyQuantity | undefined {
  const direct = BY_NAME.get(id);
  if (direct) return direct;
  if (!id.startsWith(THROUGH_METER_PREFIX)) return undefined;
  const inner = BY_NAME.get(id.slice(THROUGH_METER_PREFIX.length));
  return inner?.group === 'meter' ? inner : undefined;
}

/** The vocabulary names a non-vocabulary id stands for (`power` -> power_total; `meter_active_power` -> meter_power_total). */
export function vocabularyNamesFor(id: string): readonly string[] {
  if (BY_NAME.has(id)) return [];
  const direct = VOCABULARY_ALIASES[id];
  if (direct) return direct;
  if (!id.startsWith(THROUGH_METER_PREFIX)) return [];
  const inner = VOCABULARY_ALIASES[id.slice(THROUGH_METER_PREFIX.length)] ?? [];
  return inner.filter((name) => BY_NAME.get(name)?.group === 'meter').map((name) => `${THROUGH_METER_PREFIX}${name}`);
}

export interface VocabularyFinding {
  /** Index of the point in the profile's points. */
  index: number;
  id: string;
  message: string;
}

/** What a profile's points say against the vocabulary: another name for one of its quantities, or its name with another unit. */
export function checkVocabulary(points: readonly Readonly<Record<string, unknown>>[]): VocabularyFinding[] {
  const findings: VocabularyFinding[] = [];
  points.forEach((point, index) => {
    const id = typeof point.id === 'string' ? point.id : undefined;
    if (id === undefined) return;
    const unit = typeof point.unit === 'string' ? point.unit : '';
    const quantity = vocabularyQuantity(id);
    if (quantity) {
      if (unit !== quantity.unit) findings.push({ index, id, message: `the vocabulary's ${id} is in ${quantity.unit === '' ? 'no unit' : quantity.unit} (got ${unit === '' ? 'no unit' : unit}): scale it, or name the point otherwise` });
      return;
    }
    const names = vocabularyNamesFor(id);
    if (names.length === 0) return;
    const described = names.map((name) => {
      const meant = vocabularyQuantity(name)!;
      return `${name} (${meant.meaning}${meant.unit ? `, ${meant.unit}` : ''}${meant.sign ? `, ${meant.sign}` : ''})`;
    });
    findings.push({ index, id, message: `the vocabulary calls this quantity ${described.join(' or ')}` });
  });
  return findings;
}
