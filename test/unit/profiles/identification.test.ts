// A profile's identification block: how it is read (every problem with its path) and how a device's
// answers are judged against it (table-driven: match, mismatch, unknown, and which decides).
import { describe, expect, it } from 'vitest';
import { readProfileDoc } from '../../../src/core/config/profile-doc.js';
import { describeVerdict, judgeIdentification, matchingProfiles, type IdentificationRead } from '../../../src/core/config/identification-match.js';
import type { DeviceProfile, IdentificationRegister } from '../../../src/core/config/profile-types.js';
import type { ConfigIssue } from '../../../src/core/config/site-types.js';

const BASE = {
  name: 'acme-pm1', vendor: 'ACME', model: 'PM1',
  source: { title: 'ACME PM1 protocol', version: '1', table: 't1' },
  points: [{ id: 'v', table: 'input', address: 0, type: 'float32' }],
};

function read(identification: unknown, name = 'acme-pm1'): { profile?: DeviceProfile; issues: string[] } {
  const issues: ConfigIssue[] = [];
  const profile = readProfileDoc({ ...BASE, name, identification }, name, `${name}.yaml`, issues);
  return { profile, issues: issues.map((i) => `${i.path}: ${i.message}`) };
}

const CODE = { label: 'model code', table: 'input', address: 11, type: 'uint16', values: [100, 101] };
const NAME = { label: 'Mn', table: 'holding', address: 40004, type: 'string', length: 4, values: ['ACME'] };

describe('identification block', () => {
  it('is optional, and read with its registers as points', () => {
    expect(read(undefined).profile?.identification).toBeUndefined();
    const { profile, issues } = read({ registers: [CODE, NAME] });
    expect(issues).toEqual([]);
    const [code, name] = profile!.identification!.registers;
    expect(code.point).toMatchObject({ table: 'input', address: 11, type: 'uint16', length: 1 });
    expect(code.values).toEqual([100, 101]);
    expect(name.point).toMatchObject({ table: 'holding', address: 40004, type: 'string', length: 4 });
  });

  it('reports every problem at once, each with its path', () => {
    const { profile, issues } = read({
      registers: [
        { table: 'coil', address: 1, type: 'uint16', values: [1], label: 'x' },
        { table: 'input', address: 2, type: 'float32', values: [1.5], label: 'x' },
        { table: 'input', address: 3, type: 'uint16', values: ['a'] },
        { table: 'input', address: 70000, type: 'uint16', values: [], label: 'x', scale: 2 },
        { table: 'input', address: 4, values: [1], label: 'x' },
      ],
      extra: 1,
    });
    expect(profile).toBeUndefined();
    expect(issues).toEqual([
      'profile acme-pm1.identification.extra: unknown key',
      'profile acme-pm1.identification.registers[0].table: must be holding or input (got "coil")',
      'profile acme-pm1.identification.registers[0].type: uint16 needs a register table (holding or input), not coil',
      'profile acme-pm1.identification.registers[1].type: must be one of uint16, int16, uint32, int32, string (got "float32"): identification compares exact values',
      'profile acme-pm1.identification.registers[1].values[0]: must be an integer for type float32 (got 1.5)',
      'profile acme-pm1.identification.registers[2].label: required',
      'profile acme-pm1.identification.registers[2].values[0]: must be an integer for type uint16 (got "a")',
      'profile acme-pm1.identification.registers[3].values: must list 1 to 64 values the model shows (got 0)',
      'profile acme-pm1.identification.registers[3].scale: unknown key',
      'profile acme-pm1.identification.registers[3].address: must be 0..65535 (got 70000)',
      'profile acme-pm1.identification.registers[4].type: required: the type the document gives the register',
    ]);
  });

  it('refuses an empty or missing register list', () => {
    expect(read({ registers: [] }).issues).toEqual(['profile acme-pm1.identification.registers: must list 1 to 8 registers (got 0)']);
    expect(read({}).issues).toEqual(['profile acme-pm1.identification.registers: required (a list)']);
    expect(read('yes').issues).toEqual(['profile acme-pm1.identification: must be a mapping (got "yes")']);
  });
});

const identification = read({ registers: [CODE, NAME] }).profile!.identification!;
const ascii = (text: string, registers: number): number[] => {
  const bytes = Buffer.alloc(registers * 2);
  bytes.write(text, 'latin1');
  return Array.from({ length: registers }, (_, i) => bytes.readUInt16BE(i * 2));
};
type Answers = Record<string, IdentificationRead>;
const answer = (answers: Answers) => (r: IdentificationRegister) => answers[`${r.point.table}:${r.point.address}`];

describe('judging a device against a profile', () => {
  const cases: { name: string; answers: Answers; verdict: string }[] = [
    { name: 'both registers match', answers: { 'input:11': { kind: 'words', words: [101] }, 'holding:40004': { kind: 'words', words: ascii('ACME', 4) } }, verdict: 'match' },
    { name: 'a string padded with spaces still matches', answers: { 'input:11': { kind: 'words', words: [100] }, 'holding:40004': { kind: 'words', words: ascii('ACME    ', 4) } }, verdict: 'match' },
    { name: 'another code is another model', answers: { 'input:11': { kind: 'words', words: [102] }, 'holding:40004': { kind: 'words', words: ascii('ACME', 4) } }, verdict: 'mismatch' },
    { name: 'another name is another model', answers: { 'input:11': { kind: 'words', words: [100] }, 'holding:40004': { kind: 'words', words: ascii('ACMF', 4) } }, verdict: 'mismatch' },
    { name: 'a wrong value decides even when another register is silent', answers: { 'input:11': { kind: 'silent', detail: 'timeout' }, 'holding:40004': { kind: 'words', words: ascii('OTHR', 4) } }, verdict: 'mismatch' },
    { name: 'no answer leaves it unknown', answers: { 'input:11': { kind: 'silent', detail: 'timeout' }, 'holding:40004': { kind: 'silent', detail: 'timeout' } }, verdict: 'unknown' },
    { name: 'a refused register leaves it unknown', answers: { 'input:11': { kind: 'refused', detail: 'Illegal data address' }, 'holding:40004': { kind: 'words', words: ascii('ACME', 4) } }, verdict: 'unknown' },
    { name: 'a short reply is not a value', answers: { 'input:11': { kind: 'words', words: [] }, 'holding:40004': { kind: 'words', words: ascii('ACME', 4) } }, verdict: 'unknown' },
    { name: 'an unread register is unknown', answers: { 'input:11': { kind: 'words', words: [100] } }, verdict: 'unknown' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(judgeIdentification(identification, answer(c.answers)).kind).toBe(c.verdict);
    });
  }

  it('says what was expected and what the device said', () => {
    const verdict = judgeIdentification(identification, answer({ 'input:11': { kind: 'words', words: [7] }, 'holding:40004': { kind: 'words', words: ascii('ACME', 4) } }));
    expect(describeVerdict(verdict)).toBe('model code is 7, the profile\'s model shows 100 or 101');
    const silent = judgeIdentification(identification, answer({ 'input:11': { kind: 'silent', detail: 'timed out after 200 ms' } }));
    expect(describeVerdict(silent)).toBe('model code: no answer (timed out after 200 ms)');
  });

  it('proposes every profile whose registers all match, and no profile without identification', () => {
    const a = read({ registers: [CODE] }, 'acme-a').profile!;
    const b = read({ registers: [{ ...CODE, values: [7] }] }, 'acme-b').profile!;
    const c = read({ registers: [{ ...CODE, values: [7, 100] }] }, 'acme-c').profile!;
    const none = read(undefined, 'acme-d').profile!;
    expect(matchingProfiles([a, b, c, none], answer({ 'input:11': { kind: 'words', words: [100] } }))).toEqual(['acme-a', 'acme-c']);
    expect(matchingProfiles([a, b, c, none], answer({ 'input:11': { kind: 'words', words: [9] } }))).toEqual([]);
    expect(matchingProfiles([a, b, c, none], answer({}))).toEqual([]);
  });
});
