// What the site-file page hides (the one redaction it shares with the cloud's site_get): every
// secret the config holds and every secret key's value as written, however short, quoted or not;
// names and addresses stay readable.
import { describe, expect, it } from 'vitest';
import type { Config } from '../../../src/core/config/config.js';
import { redactSiteText } from '../../../src/core/config/site-redaction.js';

const TEXT = `gateway:
  web: { port: 8443, address: 0.0.0.0, passwordHash: "scrypt:16384:8:1:c2FsdHNhbHRzYWx0c2FsdA:aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g" }
  cloud:
    mqttUrl: mqtts://fieldgate:broker-pass@mqtt.example:8883
    projectKey: 'pk-9f8e7d'
    identity: { accessToken: gw-token-1, deviceKey: fieldgate-1 }
devices:
  - name: meter-1
    cloud: { accessToken: abc }
`;

function config(): Config {
  return {
    gateway: {
      cloud: { mqttUrl: 'mqtts://fieldgate:broker-pass@mqtt.example:8883', projectKey: 'pk-9f8e7d', identity: { accessToken: 'gw-token-1', deviceKey: 'fieldgate-1' } },
      web: { passwordHash: 'scrypt:16384:8:1:c2FsdHNhbHRzYWx0c2FsdA:aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g' },
    },
    site: { devices: [{ name: 'meter-1', cloud: { accessToken: 'abc' } }], buses: [] },
  } as unknown as Config;
}

describe('redactSiteText for the page', () => {
  it('finds every secret, keeps names, device keys and hosts', () => {
    const { text: shown, secrets } = redactSiteText(TEXT, config());
    for (const secret of ['broker-pass', 'pk-9f8e7d', 'gw-token-1', 'accessToken: abc', 'aGFzaGhhc2g']) expect(shown).not.toContain(secret);
    for (const kept of ['meter-1', 'fieldgate-1', 'mqtt.example', '0.0.0.0']) expect(shown).toContain(kept);
    // Longest first among those hidden wherever they appear: one secret inside another never leaves half of the longer one.
    const long = secrets.filter((s) => s.length >= 4 && s !== 'abc');
    expect(long).toEqual([...long].sort((a, b) => b.length - a.length || (a < b ? -1 : 1)));
  });

  it('hides in one pass: a short secret never hits a placeholder already put in', () => {
    const text = TEXT.replace('accessToken: abc', 'accessToken: "1"');
    const { text: shown } = redactSiteText(text, config());
    expect(shown).not.toMatch(/\{\{secret-\{\{|\{\{secret-\d+\{\{/);
    expect(shown).toMatch(/accessToken: "?\{\{secret-\d+\}\}"? \}/);
  });
});
