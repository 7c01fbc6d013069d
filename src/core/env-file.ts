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

/** One assignment and where it stands in the text: [start, end) covers its lines, line end included. */
export interface EnvAssignment {
  name: string;
  value: string;
  start: number;
  end: number;
}

/** The assignments of an environment file in order, ignored lines left out. */
export function parseEnvFileEntries(text: string): Array<[string, string]> {
  return envFileAssignments(text).map((a) => [a.name, a.value]);
}

/** The assignments of an environment file in order with their place in the text (ignored lines left out). */
export function envFileAssignments(text: string): EnvAssignment[] {
  const entries: EnvAssignment[] = [];
  let state: State = 'preKey';
  let key = '';
  let value = '';
  // Where trailing blanks of the key / an unquoted value start (-1: none pending).
  let keyBlankFrom = -1;
  let valueBlankFrom = -1;
  // Where the current key's line starts, and the offset just after the character being read.
  let lineStart = 0;
  let keyLineStart = 0;
  let at = 0;
  const push = (trimValue: boolean) => {
    const name = keyBlankFrom >= 0 ? key.slice(0, keyBlankFrom) : key;
    const assigned = trimValue && valueBlankFrom >= 0 ? value.slice(0, valueBlankFrom) : value;
    // A CR ending the assignment takes the LF after it along.
    const end = text[at - 1] === '\r' && text[at] === '\n' ? at + 1 : at;
    if (isEnvName(name)) entries.push({ name, value: assigned, start: keyLineStart, end });
    key = '';
    value = '';
  };
  for (const c of text) {
    at += c.length;
    switch (state) {
      case 'preKey':
        if (COMMENTS.includes(c)) state = 'comment';
        else if (NEWLINE.includes(c)) lineStart = at;
        else if (!WHITESPACE.includes(c)) {
          state = 'key';
          keyBlankFrom = -1;
          keyLineStart = lineStart;
          key = c;
        }
        break;
      case 'key':
        if (NEWLINE.includes(c)) {
          state = 'preKey';
          lineStart = at;
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
          lineStart = at;
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
          lineStart = at;
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
        else if (NEWLINE.includes(c)) {
          state = 'preKey';
          lineStart = at;
        }
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

/** The characters a value written by withEnvAssignment may hold: nothing systemd's reader would change. */
const PLAIN_VALUE = /^[A-Za-z0-9_.,:+/=@%-]*$/;

/**
 * The file with every assignment of `name` (continuation lines included) taken out and one
 * `name=value` added at the end; every other variable reads exactly as before, by the same rules.
 * Undefined when that cannot be done (a value that would need quoting, or a file whose end would
 * swallow the new line, like an unterminated quote): the caller refuses rather than guess.
 */
export function withEnvAssignment(text: string, name: string, value: string): string | undefined {
  if (!isEnvName(name) || !PLAIN_VALUE.test(value)) return undefined;
  let kept = '';
  let from = 0;
  for (const assignment of envFileAssignments(text)) {
    if (assignment.name !== name) continue;
    kept += text.slice(from, assignment.start);
    from = assignment.end;
  }
  kept += text.slice(from);
  const result = `${kept}${kept === '' || /[\n\r]$/.test(kept) ? '' : '\n'}${name}=${value}\n`;
  const before = parseEnvFile(text);
  const after = parseEnvFile(result);
  const others = (vars: Record<string, string>) => JSON.stringify(Object.entries(vars).filter(([n]) => n !== name).sort());
  return after[name] === value && others(after) === others(before) ? result : undefined;
}
