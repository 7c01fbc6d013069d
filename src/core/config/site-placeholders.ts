// An edited site text with its `{{secret-N}}` placeholders put back (pure): the way back in of
// what site-redaction.ts's redactSiteText showed. A placeholder may stand only where a secret
// goes (a secret key's value, a URL's password): anywhere else it would copy a secret where it
// shows (a name, a topic, a log line).
import { PLACEHOLDER, SECRET_KEYS } from './site-redaction.js';
import type { ConfigIssue } from './site-types.js';

/** Just before a placeholder in a secret field: the key, its colon and an opening quote (YAML or JSON). */
const SECRET_FIELD_BEFORE = new RegExp(`(?:^|[\\s{,"'])(?:${SECRET_KEYS.join('|')})["']?\\s*:\\s*["']?$`);
/** Just before a placeholder in a URL's user-info part (`mqtt://user:{{secret-1}}@host`). */
const URL_USERINFO_BEFORE = /[a-z][a-z0-9+.-]{0,31}:\/\/[^\s/?#"'<>@]*$/i;
const URL_USERINFO_AFTER = /^[^\s/?#"'<>@]*@/;

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
 * placeholder not given out, or one outside a secret field. `file` names the place in problems.
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
