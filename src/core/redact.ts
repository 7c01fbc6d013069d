// Redaction of secrets inside free text (pure): credentials written into URLs, and secret values
// the gateway knows (keys, tokens, passwords) wherever foreign text repeats them.

const CENSOR = '[redacted]';
/**
 * `scheme://user:password@host`: the whole user-info part goes, the scheme and host stay. Both
 * parts are length-bounded so a long log line costs linear time.
 */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]{0,31}:\/\/)[^\s/?#"'<>]{1,512}@/gi;
/** Shorter values are too likely to occur by chance (a port, a unit id) to be replaced at all. */
export const MIN_SECRET_LENGTH = 6;
/**
 * A secret at least this long is replaced wherever it appears (a random token that long does not
 * occur inside other words by chance). A shorter one only where it stands alone: not inside a
 * longer name, id or key (a token `meter-1` must not turn `dev-meter-1` into `dev-[redacted]`
 * nor `meter-10` into `[redacted]0`).
 */
export const SAFE_SECRET_LENGTH = 16;
/** What continues a word around a short secret: letters, digits, `_` and `-` (ids and names). */
const WORD = 'A-Za-z0-9_\\-';

export function redactUrlCredentials(text: string): string {
  if (!text.includes('://')) return text;
  return text.replace(URL_USERINFO, `$1${CENSOR}@`);
}

/**
 * The secret of a URL's user-info part (raw and decoded), for registering it as a known secret:
 * the password, or the user part when it stands alone (a token as user name). A user name beside
 * a password is a name (`fieldgate`): hiding it everywhere would hide the program's own name.
 */
export function urlSecrets(url: string | undefined): string[] {
  if (!url || !URL.canParse(url)) return [];
  const { username, password } = new URL(url);
  const secret = password || username;
  return secret ? [secret, safeDecode(secret)] : [];
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The known secret values of this process; grows as credentials are fetched. */
export class SecretValues {
  private readonly values = new Set<string>();
  private pattern: RegExp | undefined;

  add(...values: (string | undefined)[]): void {
    for (const value of values) {
      if (value === undefined || value.length < MIN_SECRET_LENGTH || this.values.has(value)) continue;
      this.values.add(value);
      // As written raw and as written inside a JSON string (a log line).
      const json = JSON.stringify(value).slice(1, -1);
      if (json !== value) this.values.add(json);
      this.pattern = undefined;
    }
  }

  get size(): number {
    return this.values.size;
  }

  /** The text with every known secret and every URL credential replaced. */
  redact(text: string): string {
    const plain = redactUrlCredentials(text);
    if (this.values.size === 0) return plain;
    this.pattern ??= secretsPattern([...this.values]);
    return plain.replace(this.pattern, CENSOR);
  }
}

/**
 * Long secrets anywhere, short ones only standing alone; longest first, so a secret containing
 * another is replaced whole.
 */
function secretsPattern(values: string[]): RegExp {
  const alternatives = values.sort((a, b) => b.length - a.length).map((value) => {
    const literal = escapeRegExp(value);
    return value.length >= SAFE_SECRET_LENGTH ? literal : `(?<![${WORD}])${literal}(?![${WORD}])`;
  });
  return new RegExp(alternatives.join('|'), 'g');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
