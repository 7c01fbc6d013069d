// Placeholders of a site text (pure), table-driven: what is hidden (site-redaction.ts, the one
// redaction of the page and the cloud), what is put back and where a placeholder may stand
// (site-placeholders.ts), and a problem quoting a secret given back as its placeholder.
import { describe, expect, it } from 'vitest';
import type { Config } from '../../../src/core/config/config.js';
import { CENSOR, redactSiteText, siteRedaction } from '../../../src/core/config/site-redaction.js';
import { restoreSiteSecrets } from '../../../src/core/config/site-placeholders.js';
import { parseSiteText, checkConfig } from '../../../src/ops/site-file.js';

const TEXT = `gateway:
  stateDir: /tmp/fg-secrets
  health: { enabled: false }
  cloud:
    identity: { accessToken: gw-secret-token }
    mqttUrl: mqtt://fieldgate:broker-pass@127.0.0.1:1883
    projectKey: "project-key-1"
buses:
  - { name: a, kind: tcp, host: 127.0.0.1, port: 5020 }
devices:
  - name: m1
    bus: a
    unitId: 1
    cloud: { accessToken: 'm1-token' }
    points: [{ id: p, table: holding, address: 0 }]
`;

function configOf(text: string): Config {
  const parsed = parseSiteText(text, 'site.yaml');
  const { config, issues } = checkConfig(parsed.raw, {});
  if (!config) throw new Error(issues.map((i) => `${i.path}: ${i.message}`).join('; '));
  return config;
}

describe('site text placeholders', () => {
  const config = configOf(TEXT);
  const { text: shown, secrets } = redactSiteText(TEXT, config);

  it('hides every secret (identity, device token, project key, URL password) and nothing else', () => {
    for (const secret of ['gw-secret-token', 'broker-pass', 'project-key-1', 'm1-token']) expect(shown).not.toContain(secret);
    expect(shown).toContain('mqtt://fieldgate:{{secret-');
    expect(shown).toContain('name: m1');
    expect(restoreSiteSecrets(shown, secrets, 'site')).toEqual({ ok: true, text: TEXT });
  });

  it('numbers the same running text the same way every time', () => {
    expect(redactSiteText(TEXT, config)).toEqual({ text: shown, secrets });
  });

  const n = (secret: string) => secrets.findIndex((s: string) => s === secret || s === `'${secret}'`) + 1;
  // Table: [what, edit of the shown text, expected problem or undefined when restored]
  const cases: Array<[string, (t: string) => string, RegExp | undefined]> = [
    ['unchanged', (t) => t, undefined],
    ['a new secret written in a secret field', (t) => t.replace(/accessToken: \{\{secret-\d+\}\} \}\n {4}mqtt/, 'accessToken: new-token }\n    mqtt'), undefined],
    ['a placeholder moved to another secret field', (t) => t.replace(`'{{secret-${n('m1-token')}}}'`, `{{secret-${n('gw-secret')}}}`), undefined],
    ['a placeholder as a device name', (t) => t.replace('name: m1', `name: "{{secret-${n('m1-token')}}}"`), /site:11: \{\{secret-\d+\}\} stands outside a secret field/],
    ['a placeholder in a host', (t) => t.replace('host: 127.0.0.1, port: 5020', `host: {{secret-1}}, port: 5020`), /outside a secret field/],
    ['a placeholder in a URL host, not its password', (t) => t.replace('@127.0.0.1:1883', '@{{secret-1}}:1883'), /outside a secret field/],
    ['a placeholder in a comment', (t) => `${t}# {{secret-1}}\n`, /outside a secret field/],
    ['a placeholder never given out', (t) => t.replace(/\{\{secret-1\}\}/, '{{secret-42}}'), /\{\{secret-42\}\} is not a placeholder of the running site \(it has \d+\)/],
    ['secret-0', (t) => t.replace(/\{\{secret-1\}\}/, '{{secret-0}}'), /\{\{secret-0\}\} is not a placeholder/],
  ];
  it.each(cases)('%s', (_what, edit, problem) => {
    const restored = restoreSiteSecrets(edit(shown), secrets, 'site');
    if (problem === undefined) {
      expect(restored.ok).toBe(true);
      if (restored.ok) expect(restored.text).not.toContain('{{secret-');
    } else {
      expect(restored.ok).toBe(false);
      if (!restored.ok) expect(restored.problems.map((p: { path: string; message: string }) => `${p.path}: ${p.message}`).join('\n')).toMatch(problem);
    }
  });

  it('a secret of the running text inside a problem goes back as its placeholder, a new one as [redacted]', () => {
    const redaction = siteRedaction({ running: config, texts: [TEXT, 'accessToken: brand-new-token-77'], placeholders: secrets });
    const issues = redaction.json([{ path: 'devices.m1.cloud', message: 'token m1-token refused, "gw-secret-token" too, and brand-new-token-77' }]);
    expect(issues).toEqual([{ path: 'devices.m1.cloud', message: `token {{secret-${secrets.indexOf('m1-token') + 1}}} refused, "{{secret-${secrets.indexOf('gw-secret-token') + 1}}}" too, and ${CENSOR}` }]);
  });

  it('a URL password however short is a placeholder too', () => {
    const short = TEXT.replace('fieldgate:broker-pass@', 'fieldgate:pw@');
    const hidden = redactSiteText(short, configOf(short));
    expect(hidden.text).toContain('mqtt://fieldgate:{{secret-');
    expect(hidden.text).not.toContain(':pw@');
    expect(restoreSiteSecrets(hidden.text, hidden.secrets, 'site')).toEqual({ ok: true, text: short });
  });

  it('a short secret key value is hidden too, and a placeholder is never searched again', () => {
    const short = TEXT.replace("accessToken: 'm1-token'", 'accessToken: "ab"');
    const hidden = redactSiteText(short, configOf(short));
    expect(hidden.text).toContain('accessToken: {{secret-');
    expect(hidden.text).not.toMatch(/\{\{secret-\{\{/);
    expect(restoreSiteSecrets(hidden.text, hidden.secrets, 'site')).toEqual({ ok: true, text: short });
  });
});
