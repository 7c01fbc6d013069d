// systemd's EnvironmentFile= format, read the way systemd 252 reads it (src/basic/env-file.c,
// parse_env_file_internal, and systemd.exec(5) "EnvironmentFile="), so the service and the
// `fieldgate` command see the same variables from the same file. Pure: text in, pairs out.
//
// The rules, as systemd applies them:
// - a line whose first non-blank character is # or ; is a comment; in systemd 252 a comment
//   ending in a backslash continues on the next line (changed in 254);
// - lines without = are ignored; blanks around the key are dropped, a key with any other
//   character than [A-Za-z0-9_] (or starting with a digit) is ignored, as systemd logs and skips it;
// - unquoted value: leading and trailing blanks dropped, inner ones kept, quotes after the first
//   character kept, a backslash keeps the next character and a backslash-newline joins lines;
// - '...' keeps everything verbatim up to the next ' (newlines too);
// - "..." keeps everything up to the next unescaped "; \" \\ \` \$ unescape, backslash-newline
//   joins lines, any other backslash pair is kept as it is;
// - quoted and unquoted parts side by side join (A="x"y is xy); the last assignment wins.

const WHITESPACE = ' \t\n\r';
const NEWLINE = '\n\r';
const COMMENTS = '#;';
/** The characters a backslash unescapes inside double quotes (systemd's SHELL_NEED_ESCAPE). */
const DOUBLE_QUOTE_ESCAPES = '"\\`$';

type State = 'preKey' | 'key' | 'preValue' | 'value' | 'valueEscape' | 'single' | 'double' | 'doubleEscape' | 'comment' | 'commentEscape';

/** A name systemd accepts for an environment variable (env_name_is_valid of systemd 252). */
export function isEnvName(name: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name);
}

/** The assignments of an environment file in order, ignored lines left out. */
export function parseEnvFileEntries(text: string): Array<[string, string]> {
  const entries: Array<[string, string]> = [];
  let state: State = 'preKey';
  let key = '';
  let value = '';
  // Where trailing blanks of the key / an unquoted value start (-1: none pending).
  let keyBlankFrom = -1;
  let valueBlankFrom = -1;
  const push = (trimValue: boolean) => {
    const name = keyBlankFrom >= 0 ? key.slice(0, keyBlankFrom) : key;
    const assigned = trimValue && valueBlankFrom >= 0 ? value.slice(0, valueBlankFrom) : value;
    if (isEnvName(name)) entries.push([name, assigned]);
    key = '';
    value = '';
  };
  for (const c of text) {
    switch (state) {
      case 'preKey':
        if (COMMENTS.includes(c)) state = 'comment';
        else if (!WHITESPACE.includes(c)) {
          state = 'key';
          keyBlankFrom = -1;
          key = c;
        }
        break;
      case 'key':
        if (NEWLINE.includes(c)) {
          state = 'preKey';
          key = '';
        } else if (c === '=') {
          state = 'preValue';
          valueBlankFrom = -1;
        } else {
          if (!WHITESPACE.includes(c)) keyBlankFrom = -1;
          else if (keyBlankFrom < 0) keyBlankFrom = key.length;
          key += c;
        }
        break;
      case 'preValue':
        if (NEWLINE.includes(c)) {
          state = 'preKey';
          push(false);
        } else if (c === "'") state = 'single';
        else if (c === '"') state = 'double';
        else if (c === '\\') state = 'valueEscape';
        else if (!WHITESPACE.includes(c)) {
          state = 'value';
          value += c;
        }
        break;
      case 'value':
        if (NEWLINE.includes(c)) {
          state = 'preKey';
          push(true);
        } else if (c === '\\') {
          state = 'valueEscape';
          valueBlankFrom = -1;
        } else {
          if (!WHITESPACE.includes(c)) valueBlankFrom = -1;
          else if (valueBlankFrom < 0) valueBlankFrom = value.length;
          value += c;
        }
        break;
      case 'valueEscape':
        state = 'value';
        if (!NEWLINE.includes(c)) value += c;
        break;
      case 'single':
        if (c === "'") state = 'preValue';
        else value += c;
        break;
      case 'double':
        if (c === '"') state = 'preValue';
        else if (c === '\\') state = 'doubleEscape';
        else value += c;
        break;
      case 'doubleEscape':
        state = 'double';
        if (DOUBLE_QUOTE_ESCAPES.includes(c)) value += c;
        else if (c !== '\n') value += `\\${c}`;
        break;
      case 'comment':
        if (c === '\\') state = 'commentEscape';
        else if (NEWLINE.includes(c)) state = 'preKey';
        break;
      case 'commentEscape':
        state = 'comment';
        break;
    }
  }
  if (state === 'preValue' || state === 'value' || state === 'valueEscape' || state === 'single' || state === 'double' || state === 'doubleEscape') {
    push(state === 'value');
  }
  return entries;
}

/** The variables of an environment file, the last assignment of a name winning (pure). */
export function parseEnvFile(text: string): Record<string, string> {
  const values: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, value] of parseEnvFileEntries(text)) values[name] = value;
  return values;
}
