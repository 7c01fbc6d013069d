// A site text shown outside the box (the cloud's site_get, the commissioning page) with every
// secret as `{{secret-N}}`, and an edited text with its placeholders put back (pure). The numbering
// comes from the running text alone, so the same running text always gives the same placeholders:
// a remote editor needs no session, only the running text's digest.
import type { Config } from './config.js';
import { configSecrets } from './secret-values.js';
import type { ConfigIssue } from './site-types.js';

/** Keys whose values are secrets wherever they appear in a site text. */
export const SECRET_KEYS = ['accessToken', 'projectKey', 'accessKey', 'secretKey', 'passwordHash'] as const;
/** Secrets shorter than this are left in place: too likely to stand for other text too. */
const MIN_HIDDEN = 4;
const PLACEHOLDER = /\{\{secret-(\d+)\}\}/g;
const IS_PLACEHOLDER = /^\{\{secret-\d+\}\}$/;
/** A secret key's value as written (quoted or bare), however short, and whether or not the config kept it. */
const SECRET_KEY_VALUE = new RegExp(`\\b(?:${SECRET_KEYS.join('|')})["']?\\s*:\\s*("(?:[^"\\\\\\n]|\\\\.)*"|'[^'\\n]*'|[^\\s,}\\]#]+)`, 'g');
/** Just before a placeholder in a secret field: the key, its colon and an opening quote (YAML or JSON). */
const SECRET_FIELD_BEFORE = new RegExp(`(?:^|[\\s{,"'])(?:${SECRET_KEYS.join('|')})["']?\\s*:\\s*["']?$`);
/** Just before a placeholder in a URL's user-info part (`mqtt://user:{{secret-1}}@host`). */
const URL_USERINFO_BEFORE = /[a-z][a-z0-9+.-]{0,31}:\/\/[^\s/?#"'<>@]*$/i;
const URL_USERINFO_AFTER = /^[^\s/?#"'<>@]*@/;

function unquoted(value: string): string {
  if (value.length >= 2 && ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'")))) return value.slice(1, -1);
  return value;
}

/** What must never leave the box of a site text, hidden wherever it appears: the config's secrets and every secret key's value as written, of at least MIN_HIDDEN characters. */
export function siteSecrets(text: string, config: Config): string[] {
  const identity = config.gateway.cloud.identity;
  const known = [...configSecrets(config), identity?.accessToken ?? '', identity?.projectKey ?? '', ...writtenSecrets(text)];
  return [...new Set(known)].filter((v) => v.length >= MIN_HIDDEN && text.includes(v)).sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
}

/** Every secret key's value as written in a text (an edited text's new secrets), quoted and bare. */
export function writtenSecrets(text: string): string[] {
  return [...text.matchAll(SECRET_KEY_VALUE)].flatMap((m) => [m[1]!, unquoted(m[1]!)]).filter((v) => v.length > 0 && !IS_PLACEHOLDER.test(unquoted(v)));
}

function escaped(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Each secret replaced by `{{secret-N}}` (N: its place in `secrets`, from 1), in one pass over the
 * text; one shorter than MIN_HIDDEN only where it stands alone (never inside another word).
 */
export function hideSiteSecrets(text: string, secrets: readonly string[]): string {
  if (secrets.length === 0) return text;
  const alternatives = secrets.map((v) => (v.length >= MIN_HIDDEN ? escaped(v) : `(?<![\\w-])${escaped(v)}(?![\\w-])`));
  // One pass: a placeholder put in is never searched again (a secret "1" must not hit "{{secret-1}}").
  return text.replace(new RegExp(alternatives.join('|'), 'g'), (found) => `{{secret-${secrets.indexOf(found) + 1}}}`);
}

/**
 * The one redaction of a running site text for eyes outside the box (cloud and page): the text
 * with placeholders, and the secrets in placeholder order (kept on the box to restore an edit).
 * Long secrets go wherever they appear; a secret key's short value only where it is written.
 */
export function redactSiteText(text: string, config: Config): { text: string; secrets: string[] } {
  const secrets = siteSecrets(text, config);
  const hidden = hideSiteSecrets(text, secrets);
  const shown = hidden.replace(SECRET_KEY_VALUE, (whole: string, value: string) => {
    if (IS_PLACEHOLDER.test(unquoted(value)) || value.includes('{{secret-')) return whole;
    let index = secrets.indexOf(value);
    if (index === -1) index = secrets.push(value) - 1;
    return `${whole.slice(0, whole.length - value.length)}{{secret-${index + 1}}}`;
  });
  return { text: shown, secrets };
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line += 1;
  return line;
}

/** True where a placeholder may stand: the value of a secret key, or a URL's user-info. */
function inSecretField(text: string, offset: number, end: number): boolean {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  const before = text.slice(lineStart, offset);
  if (SECRET_FIELD_BEFORE.test(before)) return true;
  return URL_USERINFO_BEFORE.test(before) && URL_USERINFO_AFTER.test(text.slice(end, end + 600));
}

export type RestoredSite = { ok: true; text: string } | { ok: false; problems: ConfigIssue[] };

/**
 * Placeholders put back from `secrets` (the running text's, in placeholder order). Refused: a
 * placeholder not given out, or one outside a secret field (it would copy a secret into a name,
 * a topic or a log line). `file` names the place in problems.
 */
export function restoreSiteSecrets(edited: string, secrets: readonly string[], file: string): RestoredSite {
  const problems: ConfigIssue[] = [];
  const text = edited.replace(PLACEHOLDER, (whole: string, n: string, offset: number) => {
    const value = secrets[Number(n) - 1];
    const at = `${file}:${lineOf(edited, offset)}`;
    if (value === undefined) {
      problems.push({ path: at, message: `${whole} is not a placeholder of the running site (it has ${secrets.length}): get the site again` });
      return whole;
    }
    if (!inSecretField(edited, offset, offset + whole.length)) {
      problems.push({ path: at, message: `${whole} stands outside a secret field (${SECRET_KEYS.join(', ')}, or a URL's password): a secret may not be copied there` });
      return whole;
    }
    return value;
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, text };
}

/** A problem's text with every secret as its placeholder: problems go back to the cloud. */
export function redactIssues(issues: readonly ConfigIssue[], secrets: readonly string[]): ConfigIssue[] {
  return issues.map((issue) => ({ path: hideSiteSecrets(issue.path, secrets), message: hideSiteSecrets(issue.message, secrets) }));
}
