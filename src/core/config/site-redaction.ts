// The one way text derived from a site file leaves the process (pure), for the page and the
// cloud's site commands alike: every secret of the running file and of a submitted one (keys,
// tokens, URL passwords, the page's password hash), wherever a message quotes it, whole,
// JSON-escaped, or cut (a message quotes a long value's first 40 characters); and the running text
// itself shown with each secret as `{{secret-N}}`, numbered from that text alone (the same text,
// the same numbers). Answers that may carry such text require `Redacted`, which only this module
// makes: a validator message quoting a moved secret cannot reach a client without passing here.
// Putting placeholders back into an edit is site-placeholders.ts's.
import { urlSecrets } from '../redact.js';
import type { Config } from './config.js';
import { configSecrets } from './secret-values.js';

declare const REDACTED: unique symbol;
/** A value every string of which (keys too) passed a SiteRedaction. */
export type Redacted<T> = T & { readonly [REDACTED]: true };

export const CENSOR = '[redacted]';
/** Shorter secrets are not searched for: one or two characters stand for anything (a digit of an index). */
const MIN_SEARCHED = 3;
/** Shorter secrets are replaced only standing alone: `meter-1` as a token must not cut `dev-meter-10`. */
const STANDALONE_BELOW = 16;
/** A secret this long is also hidden by any FRAGMENT characters of it: a cut quote still hides it. */
const FRAGMENT = 12;
const WORD = 'A-Za-z0-9_\\-';
/** Keys whose values are secrets wherever they appear in a site text. */
export const SECRET_KEYS = ['accessToken', 'projectKey', 'accessKey', 'secretKey', 'passwordHash'] as const;
/** A secret key's value as written (quoted or bare, YAML or JSON), whether or not the file is valid. */
const SECRET_KEY_VALUE = new RegExp(`\\b(?:${SECRET_KEYS.join('|')})["']?\\s*:\\s*("(?:[^"\\\\\\n]|\\\\.)*"|'[^'\\n]*'|[^\\s,}\\]#]+)`, 'g');
export const PLACEHOLDER = /\{\{secret-(\d+)\}\}/g;
/** Secrets shorter than this are shown as placeholders only where a secret key's value is written: too likely to stand for other text too. */
const MIN_PLACEHOLDER = 4;
/** As redactUrlCredentials, except a user-info that is already a page placeholder (`user:{{secret-1}}`) stays: the shown file must go back whole. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]{0,31}:\/\/)([^\s/?#"'<>]{1,512})@/gi;
const PLACEHOLDER_USERINFO = /^(?:[^:]*:)?\{\{secret-\d+\}\}$/;
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]{0,31}:\/\/[^\s"'<>,}\]]{1,2048}/gi;

/** Something else that redacts free text (the process's fetched credentials, `SecretValues`). */
export interface TextRedactor {
  redact(text: string): string;
}

/** Every secret a config holds: the gateway's, its own identity's and each device's. */
export function siteConfigSecrets(config: Config): string[] {
  return configSecrets(config);
}

/** The secrets a site file's text holds as written, valid or not: every secret key's value (quoted and bare) and every URL password; placeholders are none. */
export function writtenSecrets(text: string): string[] {
  const values = [...text.matchAll(SECRET_KEY_VALUE)].flatMap((m) => {
    const raw = m[1];
    const unquoted = /^["']/.test(raw) ? raw.slice(1, -1) : raw;
    return unquoted === raw ? [raw] : [raw, unquoted];
  });
  for (const [url] of text.matchAll(URL_IN_TEXT)) values.push(...urlSecrets(url));
  // A value holding a placeholder is not a secret: the placeholder stands for one (put back before use).
  return values.filter((v) => v.length > 0 && !v.includes('{{secret-'));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A secret as a message may render it: raw, and inside a JSON string. */
function renderings(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  return json === secret ? [secret] : [secret, json];
}

export class SiteRedaction {
  private readonly pattern: RegExp | undefined;
  private readonly fragments = new Set<string>();
  private readonly exact: ReadonlySet<string>;
  /** A rendering of a running text's secret -> its placeholder number: shown as `{{secret-N}}`, the way the text was shown. */
  private readonly numbered = new Map<string, number>();

  /**
   * `names`: texts already public (device, bus and point names): a fragment found in one is no secret and stays.
   * `placeholders`: the running text's secrets in placeholder order (redactSiteText): each is given back as its placeholder, not censored.
   */
  constructor(secrets: Iterable<string>, private readonly also?: TextRedactor, names: readonly string[] = [], placeholders: readonly string[] = []) {
    placeholders.forEach((secret, index) => {
      for (const rendering of renderings(secret)) if (!this.numbered.has(rendering)) this.numbered.set(rendering, index + 1);
    });
    const values = [...new Set([...secrets, ...placeholders].filter((s) => s.length >= MIN_SEARCHED).flatMap(renderings))].sort((a, b) => b.length - a.length);
    this.exact = new Set(values);
    // Longest first, so a secret containing another is replaced whole.
    this.pattern = values.length === 0 ? undefined : new RegExp(values.map((v) => (v.length >= STANDALONE_BELOW ? escapeRegExp(v) : `(?<![${WORD}])${escapeRegExp(v)}(?![${WORD}])`)).join('|'), 'g');
    for (const value of values) {
      if (value.length < STANDALONE_BELOW) continue;
      for (let i = 0; i + FRAGMENT <= value.length; i++) this.fragments.add(value.slice(i, i + FRAGMENT));
    }
    for (const name of names) {
      for (let i = 0; i + FRAGMENT <= name.length; i++) this.fragments.delete(name.slice(i, i + FRAGMENT));
    }
  }

  /** The text with every known secret, every fragment of a long one and every URL credential replaced. */
  text(text: string): Redacted<string> {
    let out = text.includes('://') ? text.replace(URL_USERINFO, (whole, scheme: string, info: string) => (PLACEHOLDER_USERINFO.test(info) ? whole : `${scheme}${CENSOR}@`)) : text;
    if (this.pattern) out = out.replace(this.pattern, (found) => (this.numbered.has(found) ? `{{secret-${this.numbered.get(found)}}}` : CENSOR));
    if (this.fragments.size > 0) out = this.hideFragments(out);
    if (this.also) out = this.also.redact(out);
    return out as Redacted<string>;
  }

  /** A copy of a JSON-shaped value with every string and key redacted (a number equal to a secret too). */
  json<T>(value: T): Redacted<T> {
    return this.walk(value) as Redacted<T>;
  }

  private walk(value: unknown): unknown {
    if (typeof value === 'string') return this.text(value);
    if (typeof value === 'number' || typeof value === 'bigint') return this.exact.has(String(value)) ? CENSOR : value;
    if (Array.isArray(value)) return value.map((v) => this.walk(v));
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined).map(([k, v]) => [this.text(k), this.walk(v)]));
    }
    return value;
  }

  private hideFragments(text: string): string {
    if (text.length < FRAGMENT) return text;
    const cut: Array<[number, number]> = [];
    for (let i = 0; i + FRAGMENT <= text.length; i++) {
      if (!this.fragments.has(text.slice(i, i + FRAGMENT))) continue;
      const last = cut[cut.length - 1];
      if (last && i <= last[1]) last[1] = i + FRAGMENT;
      else cut.push([i, i + FRAGMENT]);
    }
    if (cut.length === 0) return text;
    let out = '';
    let from = 0;
    for (const [start, end] of cut) {
      out += text.slice(from, start) + CENSOR;
      from = end;
    }
    return out + text.slice(from);
  }
}

export interface RedactionSources {
  /** The running config: its secrets are known, and its names are public (fragments found in them stay). */
  running?: Config;
  /** A submitted config that compiled: its secrets are known too (its names are not trusted as public). */
  submitted?: Config;
  /** Site-file texts whose written secrets are known, valid or not (a submitted edit). */
  texts?: readonly string[];
  /** Secrets known otherwise (the values behind a session's placeholders). */
  secrets?: readonly string[];
  /** The running text's secrets in placeholder order: quoted in a message, each goes back as its `{{secret-N}}`. */
  placeholders?: readonly string[];
  also?: TextRedactor;
}

/** The redaction that knows every secret of the given configs, texts and values. */
export function siteRedaction(sources: RedactionSources): SiteRedaction {
  const secrets = [
    ...[sources.running, sources.submitted].flatMap((c) => (c ? siteConfigSecrets(c) : [])),
    ...(sources.texts ?? []).flatMap(writtenSecrets),
    ...(sources.secrets ?? []),
  ];
  const site = sources.running?.site;
  const names = site ? [...site.buses.map((b) => b.name), ...site.devices.flatMap((d) => [d.name, ...d.points.map((p) => p.id)])] : [];
  return new SiteRedaction(secrets, sources.also, names, sources.placeholders);
}

/** What a running text shows as placeholders, in placeholder order: the config's secrets and every secret written, of at least MIN_PLACEHOLDER characters, longest first. */
function placeholderSecrets(text: string, config: Config): string[] {
  const known = [...siteConfigSecrets(config), ...writtenSecrets(text)];
  return [...new Set(known)].filter((v) => v.length >= MIN_PLACEHOLDER && text.includes(v)).sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
}

/**
 * A running site text for eyes outside the box (the page, site_get): each secret as
 * `{{secret-N}}`, and the secrets in placeholder order (kept on the box to put an edit's
 * placeholders back). Long secrets go wherever they appear, in one pass (a placeholder put in is
 * never searched again); a secret key's short value only where it is written.
 */
export function redactSiteText(text: string, config: Config): { text: Redacted<string>; secrets: string[] } {
  const secrets = placeholderSecrets(text, config);
  const hidden = secrets.length === 0 ? text : text.replace(new RegExp(secrets.map(escapeRegExp).join('|'), 'g'), (found) => `{{secret-${secrets.indexOf(found) + 1}}}`);
  const shown = hidden.replace(SECRET_KEY_VALUE, (whole: string, value: string) => {
    if (value.includes('{{secret-')) return whole;
    let index = secrets.indexOf(value);
    if (index === -1) index = secrets.push(value) - 1;
    return `${whole.slice(0, whole.length - value.length)}{{secret-${index + 1}}}`;
  });
  // A URL's password (or its user alone), however short: it shows nowhere else.
  const urls = shown.replace(URL_USERINFO, (whole: string, scheme: string, info: string) => {
    if (info.includes('{{secret-')) return whole;
    const colon = info.indexOf(':');
    const secret = colon === -1 ? info : info.slice(colon + 1);
    if (secret === '') return whole;
    let index = secrets.indexOf(secret);
    if (index === -1) index = secrets.push(secret) - 1;
    return `${scheme}${colon === -1 ? '' : info.slice(0, colon + 1)}{{secret-${index + 1}}}@`;
  });
  return { text: urls as Redacted<string>, secrets };
}
