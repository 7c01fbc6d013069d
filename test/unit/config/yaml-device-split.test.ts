// Parsing a site file one device at a time gives exactly what the whole-document parse gives, on
// every YAML file of the project and on layouts built to trip a line-based cut; what cannot be cut
// safely is parsed whole (errors then point at the right line).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { splitDeviceItems } from '../../../src/core/config/yaml-device-split.js';
import { parseYaml } from '../../../src/ops/site-file.js';
import { depthIssue, SITE_TEXT_DEFAULTS } from '../../../src/core/config/text-guards.js';

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return yamlFiles(path);
    return /\.ya?ml$/.test(name) ? [path] : [];
  });
}

// Files refused for their depth before any parser sees them (parseSiteText) are left out.
const FILES = [...yamlFiles('test/fixtures'), ...yamlFiles('config')].filter((f) => !depthIssue(readFileSync(f, 'utf8'), f, SITE_TEXT_DEFAULTS));

const SITE = (devices: string) => `gateway:\n  stateDir: /tmp/x # devices:\nbuses:\n  - { name: a, kind: tcp, host: 127.0.0.1 }\ndevices:${devices}\n`;

const TRICKY: Array<[string, string, boolean]> = [
  ['flow entries', SITE('\n  - { name: a, bus: a, unitId: 1 }\n  - { name: b, bus: a, unitId: 2 }'), true],
  ['block entries with comments and blank lines', SITE('\n  # first\n  - name: a\n    bus: a\n\n    unitId: 1\n# a comment at column 0\n  - name: b\n    bus: a\n    unitId: 2\n    note: |\n      - not an entry\n      two'), true],
  ['a multi-line flow entry', SITE('\n  - { name: a, bus: a,\n    unitId: 1 }\n  - { name: b, bus: a, unitId: 2 }'), true],
  ['a quoted string over lines', SITE('\n  - name: "a\n    b"\n    bus: a'), true],
  ['CRLF line ends', SITE('\n  - { name: a, bus: a, unitId: 1 }\n  - name: b\n    bus: a').replace(/\n/g, '\r\n'), true],
  ['entries at column 0 (parsed whole)', SITE('\n- { name: a }\n- { name: b }'), false],
  ['an anchor and alias (parsed whole)', SITE('\n  - &m { name: a, bus: a }\n  - { <<: *m, name: b }'), false],
  ['devices in flow style (parsed whole)', 'devices: [{ name: a }]\n', false],
  ['a second document (parsed whole)', `${SITE('\n  - { name: a }')}---\nx: 1\n`, false],
  ['a tab-indented line (parsed whole)', SITE('\n  - name: a\n\tbus: a'), false],
  ['devices and profiles after it', `${SITE('\n  - { name: a }\n  - name: b\n    points: []')}profiles:\n  p: { points: [] }\n`, true],
  ['a duplicate key in an entry (parsed whole, error in place)', SITE('\n  - { name: a }\n  - name: b\n    name: c'), true],
  ['an unterminated flow entry (parsed whole, error in place)', SITE('\n  - { name: a\n  - { name: b }'), true],
];

describe('site file parsed one device at a time', () => {
  it.each(FILES.map((f) => [f]))('%s: the same as the whole document', (file) => {
    const text = readFileSync(file, 'utf8');
    expect(parseYaml(text, file, true)).toEqual(parseYaml(text, file, false));
  });

  it.each(TRICKY)('%s: the same as the whole document', (_name, text, cut) => {
    expect(splitDeviceItems(text) !== undefined).toBe(cut);
    expect(parseYaml(text, 'site.yaml', true)).toEqual(parseYaml(text, 'site.yaml', false));
  });

  it('cuts a large plain site into one piece per device', () => {
    const devices = Array.from({ length: 300 }, (_, i) => `\n  - { name: d${i}, bus: a, unitId: ${(i % 200) + 1}, points: [{ id: p, table: holding, address: 0 }] }`).join('');
    const split = splitDeviceItems(SITE(devices));
    expect(split?.items).toHaveLength(300);
    const parsed = parseYaml(SITE(devices), 'site.yaml', true);
    expect((parsed.raw as { devices: unknown[] }).devices).toHaveLength(300);
    expect(parsed).toEqual(parseYaml(SITE(devices), 'site.yaml', false));
  });
});
