// The one redaction of text derived from a site file: whole, JSON-escaped and cut secrets, short
// ones only standing alone, numbers equal to a secret, keys as well as values; a shown file's
// placeholders (in a URL too) stay as they are.
import { describe, expect, it } from 'vitest';
import { SiteRedaction, siteRedaction, writtenSecrets } from '../../src/core/config/site-redaction.js';

const LONG = 'meter-token-aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5';

describe('SiteRedaction', () => {
  it('hides a secret whole, JSON-escaped, and any 12 characters of a long one (a quote cut at 40)', () => {
    const r = new SiteRedaction([LONG, 'quo"ted-secret-value-1']);
    expect(r.text(`got "${LONG.slice(0, 40)}"... (48 characters)`)).toBe('got "[redacted]"... (48 characters)');
    expect(r.text(JSON.stringify({ m: 'quo"ted-secret-value-1' }))).not.toContain('ted-secret');
    expect(r.text(`x${LONG}y`)).toBe('x[redacted]y');
  });

  it('replaces a short secret only standing alone, never inside a longer name', () => {
    const r = new SiteRedaction(['ab9c']);
    expect(r.text('unitId: must be an integer (got "ab9c")')).toBe('unitId: must be an integer (got "[redacted]")');
    expect(r.text('device xab9cy')).toBe('device xab9cy');
  });

  it('redacts every string and key of a JSON value, and a number equal to a secret', () => {
    const r = new SiteRedaction(['12345678', 'tok-secret']);
    expect(r.json({ 'tok-secret': [{ message: 'tok-secret' }], n: 12345678, ok: true })).toEqual({ '[redacted]': [{ message: '[redacted]' }], n: '[redacted]', ok: true });
  });

  it('keeps a placeholder as a URL password, redacts any other URL credential', () => {
    const r = new SiteRedaction([]);
    expect(r.text('mqtt://fieldgate:{{secret-2}}@host')).toBe('mqtt://fieldgate:{{secret-2}}@host');
    expect(r.text('mqtt://fieldgate:hunter2@host')).toBe('mqtt://[redacted]@host');
  });

  it('knows the secrets an invalid text holds as written: secret keys and URL passwords', () => {
    const text = 'gateway:\n  cloud: { projectKey: "pk 1", mqttUrl: "mqtt://u:pw-99@h" }\ndevices: [ { cloud: { accessToken: t0k } } ]\n  bad: [';
    expect(writtenSecrets(text)).toEqual(expect.arrayContaining(['pk 1', 'pw-99', 't0k']));
    expect(siteRedaction({ texts: [text] }).text('pk 1 / pw-99 / t0k')).toBe('[redacted] / [redacted] / [redacted]');
  });

  it('leaves a name of the site alone where it shares 12 characters with a long secret (they are public already)', () => {
    const r = new SiteRedaction(['boiler-house-1-token-9f8e7d6c'], undefined, ['boiler-house-1']);
    expect(r.text('device boiler-house-1 offline')).toBe('device boiler-house-1 offline');
    expect(r.text('got "boiler-house-1-token-9f8e7d6c"')).toBe('got "[redacted]"');
    expect(r.text('got "use-house-1-token-9f8e"')).not.toContain('token-9f8e');
  });
});
