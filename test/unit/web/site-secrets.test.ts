// What the site-file page hides: every secret the config holds and every secret key's value as
// written, however short, quoted or not; names and addresses stay readable.
import { describe, expect, it } from 'vitest';
import type { Config } from '../../../src/core/config/config.js';
import { hideSecrets, secretsIn } from '../../../src/ops/web/site-view.js';

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

describe('secretsIn', () => {
  it('finds every secret, keeps names, device keys and hosts', () => {
    const secrets = secretsIn(TEXT, config());
    const shown = hideSecrets(TEXT, secrets);
    for (const secret of ['broker-pass', 'pk-9f8e7d', 'gw-token-1', 'accessToken: abc', 'aGFzaGhhc2g']) expect(shown).not.toContain(secret);
    for (const kept of ['meter-1', 'fieldgate-1', 'mqtt.example', '0.0.0.0']) expect(shown).toContain(kept);
    // Longest first: one secret inside another never leaves half of the longer one.
    expect(secrets).toEqual([...secrets].sort((a, b) => b.length - a.length));
  });

  it('hides in one pass: a short secret never hits a placeholder already put in', () => {
    expect(hideSecrets('a: long-secret\nb: 1\n', ['long-secret', '1'])).toBe('a: {{secret-1}}\nb: {{secret-2}}\n');
  });
});
