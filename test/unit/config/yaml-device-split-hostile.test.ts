// Hostile layouts for the line-based cut of the devices block: whatever the cut makes of them, the
// parse equals the whole-document parse (values, or the same errors in place), or the file is parsed
// whole. `cut`: whether the plain-layout fast path must (true) or must not (false) be taken.
import { describe, expect, it } from 'vitest';
import { splitDeviceItems } from '../../../src/core/config/yaml-device-split.js';
import { parseSiteText, parseYaml, parseYamlByDevice } from '../../../src/ops/site-file.js';

const HEAD = 'gateway:\n  stateDir: /tmp/x\nbuses:\n  - { name: a, kind: tcp, host: 127.0.0.1 }\n';
const SITE = (devices: string, tail = '') => `${HEAD}devices:${devices}\n${tail}`;
const LONG = 'x'.repeat(200_000);

const CASES: Array<{ name: string; text: string; cut?: boolean }> = [
  // Block scalars whose content looks like entries, at every indent they may take.
  ...[4, 5, 6, 8].map((n) => ({ name: `literal block with "- name: x" at indent ${n}`, text: SITE(`\n  - name: a\n    note: |\n${' '.repeat(n)}- name: x\n${' '.repeat(n)}  bus: a\n  - name: b`), cut: true })),
  ...[4, 6].map((n) => ({ name: `folded block with "- name: x" at indent ${n}`, text: SITE(`\n  - name: a\n    note: >\n${' '.repeat(n)}- name: x\n\n${' '.repeat(n)}- name: y\n  - name: b`), cut: true })),
  { name: 'block scalar with an indentation indicator', text: SITE('\n  - name: a\n    note: |1\n      - name: x\n  - name: b') },
  { name: 'block scalar keeping trailing lines (|+) before the next entry', text: SITE('\n  - name: a\n    note: |+\n      text\n\n\n  - name: b'), cut: true },
  { name: 'block scalar as an entry of a nested list', text: SITE('\n  - name: a\n    tags:\n    - |\n     - name: x\n  - name: b') },
  { name: 'block scalar with a column-0 comment-looking line inside', text: SITE('\n  - name: a\n    note: |\n      one\n# two\n      three\n  - name: b') },
  { name: 'block scalar at the top whose content says devices', text: `notes: |\n  devices:\n    - name: evil\n${SITE('\n  - name: a')}` },
  // Comments.
  { name: 'comments between, before and after entries, at every indent', text: SITE('\n# c0\n  # c2\n  - name: a # trailing\n    # c4\n# c0 again\n  - name: b\n   # c3\n# after', 'other: 1\n'), cut: true },
  { name: 'a comment that looks like an entry at column 0', text: SITE('\n  - name: a\n#- name: x\n  - name: b'), cut: true },
  // Flow collections.
  { name: 'flow sequence entry over lines', text: SITE('\n  - [a,\n    b]\n  - name: b') },
  { name: 'flow mapping with "- " on a continuation line', text: SITE('\n  - { name: a,\n  - b }') },
  { name: 'flow mapping continued at column 0', text: SITE('\n  - { name: a,\nbus: b }\n  - name: c') },
  { name: 'the whole site in a flow mapping over lines', text: `# YAML, not JSON\n{ gateway: {},\ndevices:\n  - name: a\n}\n` },
  { name: 'devices inside a flow mapping of another key', text: `gateway: {\ndevices:\n  - name: evil\n}\ndevices:\n  - name: a\n` },
  // Quoted scalars around the key.
  { name: 'quoted keys', text: `${HEAD}"devices":\n  - name: a\n` },
  { name: 'single-quoted devices key', text: `${HEAD}'devices':\n  - name: a\n` },
  { name: 'quoted keys in entries', text: SITE('\n  - "name": a\n    \'bus\': a\n  - "name": b'), cut: true },
  { name: 'a double-quoted string holding the devices line', text: `devices: []\nnotes: "x\ndevices:\n  - name: evil\n"\n` },
  { name: 'a single-quoted string holding the devices line', text: `devices: []\nnotes: 'x\ndevices:\n  - name: evil\n'\n` },
  { name: 'a double-quoted string over an entry boundary', text: SITE('\n  - name: "a\n  - name: b"') },
  { name: 'a single-quoted string over an entry boundary', text: SITE("\n  - name: 'a\n  - name: b'") },
  { name: 'a plain scalar continued on the next line', text: SITE('\n  - name: a\n    note: one\n      two\n  - name: b'), cut: true },
  // Tabs.
  { name: 'tab after the dash', text: SITE('\n  -\tname: a\n  - name: b') },
  { name: 'tab before the dash', text: SITE('\n  - name: a\n\t- name: b'), cut: false },
  { name: 'tab inside the indentation of a key', text: SITE('\n  - name: a\n  \tbus: a'), cut: false },
  { name: 'tab in a value', text: SITE('\n  - name: a\tb\n  - name: "c\td"') },
  // Line ends, byte order mark, markers.
  { name: 'CRLF everywhere, block scalar and comments', text: SITE('\n  - name: a\n    note: |\n      - name: x\n# c\n  - name: b', 'other: 1\n').replace(/\n/g, '\r\n'), cut: true },
  { name: 'a lone CR line end', text: SITE('\n  - name: a\r  - name: b') },
  { name: 'CRLF on the key line only', text: `${HEAD}devices:\r\n  - name: a\n  - name: b\n` },
  { name: 'a byte order mark', text: `\uFEFF${SITE('\n  - name: a')}` },
  { name: 'a byte order mark before the devices key', text: `\uFEFFdevices:\n  - name: a\n` },
  { name: 'trailing document end marker', text: SITE('\n  - name: a', '...\n'), cut: false },
  { name: 'a document start marker', text: `---\n${SITE('\n  - name: a')}`, cut: false },
  // Where the key is.
  { name: 'devices nested under another key only', text: `${HEAD}site:\n  devices:\n    - name: a\n`, cut: false },
  { name: 'devices nested under another key and at the top', text: `${HEAD}site:\n  devices:\n    - name: x\ndevices:\n  - name: a\n`, cut: true },
  { name: 'two devices keys', text: `${SITE('\n  - name: a')}devices:\n  - name: b\n`, cut: false },
  { name: 'a devices key with a tag', text: `${HEAD}devices: !!seq\n  - name: a\n` },
  { name: 'a devices key with a space before the colon', text: `${HEAD}devices :\n  - name: a\n` },
  { name: 'devices as a complex key', text: `${HEAD}? devices\n: - name: a\n` },
  { name: 'a mapping under devices', text: SITE('\n  a: { name: a }') },
  { name: 'an empty devices key followed by a key', text: `${HEAD}devices:\nprofiles: {}\n` },
  { name: 'entries at mixed indents', text: SITE('\n  - name: a\n   - name: b\n  - name: c') },
  { name: 'a deeper second entry', text: SITE('\n  - name: a\n    - name: b') },
  { name: 'a key at the entries\' indent after them', text: SITE('\n  - name: a\n  extra: 1') },
  { name: 'an empty entry', text: SITE('\n  -\n  - name: b'), cut: true },
  { name: 'a duplicate key across the head', text: `${SITE('\n  - name: a')}gateway: {}\n` },
  // Size.
  { name: 'very long lines', text: SITE(`\n  - name: a\n    note: ${LONG}\n  - name: "${LONG}"\n  # ${LONG}`, `other: ${LONG}\n`), cut: true },
  { name: 'a very long line of spaces', text: SITE(`\n  - name: a\n${' '.repeat(200_000)}\n  - name: b`), cut: true },
];

describe('devices block cut on hostile layouts', () => {
  it.each(CASES.map((c) => [c.name, c]))('%s: the same as the whole document', (_name, c) => {
    if (c.cut !== undefined) expect(splitDeviceItems(c.text.replace(/^\uFEFF/, '')) !== undefined).toBe(c.cut);
    const whole = parseYaml(c.text.replace(/^\uFEFF/, ''), 'site.yaml', false);
    // A plain, valid layout is really parsed by pieces (the memory saving), not only cut.
    if (c.cut && whole.issues.length === 0) expect(parseYamlByDevice(c.text.replace(/^\uFEFF/, ''))).toBeDefined();
    expect(parseSiteText(c.text, 'site.yaml')).toEqual(whole);
    expect(parseYaml(c.text, 'site.yaml', true)).toEqual(parseYaml(c.text, 'site.yaml', false));
  });
});
