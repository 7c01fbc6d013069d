// Redaction of secrets inside free text (pure): credentials written into URLs, and secret values
// the gateway knows (keys, tokens, passwords) wherever foreign text repeats them.

const CENSOR = '[redacted]';
/**
 * `scheme://user:password@host`: the whole user-info part goes, the scheme and host stay. Both
 * parts are length-bounded so a long log line costs linear time.
 */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]{0,31}:\/\/)[^\s/?#"'<>]{1,512}@/gi;
/** Shorter values are too likely to occur by chance (a port, a unit id) to be replaced everywhere. */
export const MIN_SECRET_LENGTH = 6;

export function redactUrlCredentials(text: string): string {
  if (!text.includes('://')) return text;
  return text.replace(URL_USERINFO, `$1${CENSOR}@`);
}

/** The user-info part of a URL (decoded), for registering it as a known secret. */
export function urlSecrets(url: string | undefined): string[] {
  if (!url || !URL.canParse(url)) return [];
  const { username, password } = new URL(url);
  return [username, password].filter(Boolean).flatMap((part) => [part, safeDecode(part)]);
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
    // Longest first, so a secret containing another is replaced whole.
    this.pattern ??= new RegExp([...this.values].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|'), 'g');
    return plain.replace(this.pattern, CENSOR);
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
