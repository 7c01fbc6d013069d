// Adding a device to a site file's text (the page's no-YAML flow): refusals with the field and
// kind each, and a text that reads as before plus the entry, changed only where the entry goes.
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { addDeviceToSite, textChange, type AddField, type NewDevice } from '../../../src/core/config/site-add-device.js';

const PROFILES = { profiles: new Set(['eastron-sdm630', 'sunspec-common']), cloud: true };
const NO_CLOUD = { ...PROFILES, cloud: false };
const HEAD = [
  '# The plant', 'gateway:', '  stateDir: /var/lib/fieldgate   # kept as written', '  cloud:', "    mqttUrl: 'mqtt://127.0.0.1:1883'", '    projectKey: pk-1234567',
  'buses:', '  - { name: plant, kind: tcp, host: 127.0.0.1, port: 5020 }', '  - name: line   # the RS-485 adapter', '    kind: rtu', '    path: /dev/ttyUSB0',
].join('\n');
const WITH_METER = `${HEAD}\ndevices:\n  # first meter\n  - name: meter-1\n    bus: line\n    unitId: 3\n    profile: eastron-sdm630\n# the end\n`;
const NEW: NewDevice = { name: 'meter-2', bus: 'line', unitId: 4, profile: 'eastron-sdm630' };

function devicesOf(text: string): unknown[] {
  return (parseDocument(text, { merge: true }).toJS() as { devices: unknown[] }).devices;
}

describe('addDeviceToSite refuses', () => {
  const cases: Array<[string, string, Partial<NewDevice>, AddField, string, RegExp]> = [
    ['a duplicate name', WITH_METER, { name: 'meter-1' }, 'name', 'taken', /already in the site file/],
    ['a unit already used on that bus', WITH_METER, { unitId: 3 }, 'unitId', 'taken', /unit 3 on bus "line" is already device "meter-1"/],
    ['an unknown profile', WITH_METER, { profile: 'no-such-meter' }, 'profile', 'unknown', /no profile named "no-such-meter"/],
    ['an unknown bus', WITH_METER, { bus: 'nowhere' }, 'bus', 'unknown', /no bus named "nowhere" .*buses: plant, line/],
    ['a name with quotes and HTML', WITH_METER, { name: '"><img src=x onerror=alert(1)>' }, 'name', 'invalid', /must start with a letter or digit/],
    ['a name with a newline', WITH_METER, { name: 'meter-2\n  - name: evil' }, 'name', 'invalid', /must start with a letter or digit/],
    ['a name with a quote', WITH_METER, { name: "meter'2" }, 'name', 'invalid', /must start with a letter or digit/],
    ['a reserved name', WITH_METER, { name: '__proto__' }, 'name', 'invalid', /must start with a letter or digit/],
    ['a name of the object prototype', WITH_METER, { name: 'constructor' }, 'name', 'invalid', /reserved/],
    ['broadcast on an RTU bus', WITH_METER, { unitId: 0 }, 'unitId', 'invalid', /must be 1\.\.247 on rtu bus "line"/],
    ['unit 256 on a TCP bus', WITH_METER, { bus: 'plant', unitId: 256 }, 'unitId', 'invalid', /must be 0\.\.255 on tcp bus "plant"/],
    ['a fractional unit', WITH_METER, { unitId: 2.5 }, 'unitId', 'invalid', /unitId must be/],
    ['a poll period below 10 ms', WITH_METER, { pollIntervalMs: 5 }, 'pollIntervalMs', 'invalid', /0 or 10\.\.86400000/],
    ['a token with a newline', WITH_METER, { accessToken: 'tok\nprojectKey: x' }, 'accessToken', 'invalid', /no spaces or control characters/],
    ['a token on a site without a cloud', WITH_METER, { accessToken: 'tok-1' }, 'accessToken', 'invalid', /has no cloud/],
    ['a file that does not parse', `${HEAD}\ndevices:\n  - name: [unclosed\n`, {}, 'site', 'invalid', /does not parse/],
    ['a file that is a list', '- a\n- b\n', {}, 'site', 'invalid', /not a mapping/],
    ['devices that are not a list', `${HEAD}\ndevices: { a: 1 }\n`, {}, 'site', 'invalid', /devices must be a list/],
  ];
  it.each(cases)('%s', (what, text, change, field, kind, message) => {
    const result = addDeviceToSite(text, { ...NEW, ...change }, what.includes('without a cloud') ? NO_CLOUD : PROFILES);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toContainEqual({ field, kind, message: expect.stringMatching(message) as unknown as string });
  });

  it('every problem at once', () => {
    const result = addDeviceToSite(WITH_METER, { name: 'meter-1', bus: 'line', unitId: 3, profile: 'nope', pollIntervalMs: -1 }, PROFILES);
    expect(result.ok ? [] : result.problems.map((p) => p.field)).toEqual(['name', 'unitId', 'profile', 'pollIntervalMs']);
  });

  it('a name already taken through an anchor and a merge key', () => {
    const text = `${HEAD}\nbase: &meter { bus: line, profile: eastron-sdm630 }\ndevices:\n  - { <<: *meter, name: meter-1, unitId: 3 }\n`;
    const byUnit = addDeviceToSite(text, { ...NEW, unitId: 3 }, PROFILES);
    expect(byUnit.ok ? [] : byUnit.problems.map((p) => p.message)).toEqual(['unit 3 on bus "line" is already device "meter-1"']);
  });

  it('a file of many aliases (billion laughs) without expanding it', () => {
    const laughs = ['a: &a [x, x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${String.fromCharCode(97 + i)}`).join(', ')}]`)].join('\n');
    const result = addDeviceToSite(`${HEAD}\n${laughs}\ndevices: []\n`, NEW, PROFILES);
    expect(result.ok ? [] : result.problems.map((p) => p.field)).toEqual(['site']);
  });
});

describe('addDeviceToSite adds', () => {
  const entry = '  - name: meter-2\n    bus: line\n    unitId: 4\n    profile: eastron-sdm630\n';
  const cases: Array<[string, string, string]> = [
    ['after the last block entry, comments and spacing kept', WITH_METER, WITH_METER.replace('# the end', `${entry.trimEnd()}\n# the end`)],
    ['in place of an empty inline list, its comment kept', `${HEAD}\ndevices: []   # none yet\n# the end\n`, `${HEAD}\ndevices:   # none yet\n${entry}# the end\n`],
    ['under a devices key with nothing after it', `${HEAD}\ndevices:\n`, `${HEAD}\ndevices:\n${entry}`],
    ['as a new devices key at the end (no final line break)', HEAD, `${HEAD}\ndevices:\n${entry}`],
    ['after entries indented by four', `${HEAD}\ndevices:\n    - name: meter-1\n      bus: line\n      unitId: 3\n      profile: eastron-sdm630\n`, `${HEAD}\ndevices:\n    - name: meter-1\n      bus: line\n      unitId: 3\n      profile: eastron-sdm630\n${entry.replace(/^(?=.)/gm, '  ')}`],
    ['after an entry ending in a block scalar', `${HEAD}\ndevices:\n  - name: meter-1\n    bus: line\n    unitId: 3\n    profile: eastron-sdm630\n    note: |\n      two\n      lines\ngateway2: x\n`, `${HEAD}\ndevices:\n  - name: meter-1\n    bus: line\n    unitId: 3\n    profile: eastron-sdm630\n    note: |\n      two\n      lines\n${entry}gateway2: x\n`],
  ];
  it.each(cases)('%s', (_what, text, expected) => {
    const result = addDeviceToSite(text, NEW, PROFILES);
    expect(result.ok && result.text).toBe(expected);
  });

  it('with a period and a credential (an inline cloud block)', () => {
    const result = addDeviceToSite(WITH_METER, { ...NEW, pollIntervalMs: 2000, accessToken: 'tok-"quoted"' }, PROFILES);
    expect(result.ok && result.change.added).toEqual(['  - name: meter-2', '    bus: line', '    unitId: 4', '    profile: eastron-sdm630', '    pollIntervalMs: 2000', '    cloud: { accessToken: tok-"quoted" }']);
    expect(result.ok && devicesOf(result.text).at(-1)).toEqual({ name: 'meter-2', bus: 'line', unitId: 4, profile: 'eastron-sdm630', pollIntervalMs: 2000, cloud: { accessToken: 'tok-"quoted"' } });
  });

  it('to an inline list with entries: the whole document written back, comments kept', () => {
    const text = `${HEAD}\ndevices: [{ name: meter-1, bus: line, unitId: 3, profile: eastron-sdm630 }] # one\n`;
    const result = addDeviceToSite(text, NEW, PROFILES);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(devicesOf(result.text)).toEqual([{ name: 'meter-1', bus: 'line', unitId: 3, profile: 'eastron-sdm630' }, { name: 'meter-2', bus: 'line', unitId: 4, profile: 'eastron-sdm630' }]);
    expect(result.text).toContain('# The plant');
    expect(result.text).toContain('# the RS-485 adapter');
  });

  it('to a site whose devices use anchors: the aliases stay, the entry is plain', () => {
    const text = `${HEAD}\ndevices:\n  - &m1 { name: meter-1, bus: line, unitId: 3, profile: eastron-sdm630 }\n  - { <<: *m1, name: meter-3, unitId: 5 }\n`;
    const result = addDeviceToSite(text, NEW, PROFILES);
    expect(result.ok && result.change).toEqual({ at: 15, removed: [], added: entry.trimEnd().split('\n') });
    expect(result.ok && devicesOf(result.text).map((d) => (d as { name: string }).name)).toEqual(['meter-1', 'meter-3', 'meter-2']);
  });
});

describe('textChange', () => {
  it.each([
    ['an insertion', 'a\nb\nc', 'a\nb\nx\nc', { at: 3, removed: [], added: ['x'] }],
    ['a replacement', 'a\nb\nc', 'a\ny\nc', { at: 2, removed: ['b'], added: ['y'] }],
    ['nothing', 'a\nb', 'a\nb', { at: 3, removed: [], added: [] }],
    ['at the end', 'a', 'a\nb', { at: 2, removed: [], added: ['b'] }],
  ])('%s', (_what, before, after, change) => {
    expect(textChange(before, after)).toEqual(change);
  });
});

describe('addDeviceToSite on the text the page shows', () => {
  it('placeholders ({{secret-N}}) stay as they are and print no warning', () => {
    const warnings: string[] = [];
    const listener = (w: Error) => warnings.push(w.message);
    process.on('warning', listener);
    try {
      const shown = WITH_METER.replace('projectKey: pk-1234567', 'projectKey: {{secret-1}}').replace('profile: eastron-sdm630\n#', 'profile: eastron-sdm630\n    cloud: { accessToken: {{secret-2}} }\n#');
      const result = addDeviceToSite(shown, NEW, PROFILES);
      expect(result.ok && result.text).toBe(shown.replace('# the end', '  - name: meter-2\n    bus: line\n    unitId: 4\n    profile: eastron-sdm630\n# the end'));
      // Unspliceable layout: the whole document, its placeholders kept.
      const inline = addDeviceToSite(`${HEAD.replace('pk-1234567', '{{secret-1}}')}\ndevices: [{ name: meter-1, bus: line, unitId: 3, profile: eastron-sdm630 }]\n`, NEW, PROFILES);
      expect(inline.ok && inline.text).toContain('projectKey: {{secret-1}}');
    } finally {
      process.off('warning', listener);
    }
    expect(warnings).toEqual([]);
  });
});
