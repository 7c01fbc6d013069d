// A large site file's `devices:` block cut into one piece of text per device (pure), so the YAML
// parser builds one device's syntax tree at a time: the tree of a whole 1,000-device file is ~400 MB
// for 3.5 MB of text, and was the daemon's start-up and reload peak. Only a plain layout is cut
// (top-level `devices:` key on its own line, a block sequence under it, no anchors, aliases,
// directives or document markers anywhere); anything else is left to the whole-document parse, and
// so is any piece that does not parse cleanly (ops/site-file.ts), so a cut can only lose memory
// savings, never change a value.

export interface DeviceSplit {
  /** The document with the devices block emptied: `devices: []` where the block was. */
  head: string;
  /** Where that `[]` is in `head`: the parse of `head` must find the top-level devices value there. */
  valueOffset: number;
  /** Each device's text: one block-sequence entry, at its original indentation. */
  items: string[];
}

const TOP_KEY = /^devices:[ \t]*(#.*)?\r?$/;

function blank(line: string): boolean {
  return /^[ \t]*(#.*)?\r?$/.test(line);
}

function indentOf(line: string): number {
  return /^ */.exec(line)?.[0].length ?? 0;
}

function entryAt(line: string, indent: number): boolean {
  return indentOf(line) === indent && /^-([ \t]|\r?$)/.test(line.slice(indent));
}

/** The devices block cut per entry, or undefined when the text is not laid out plainly enough to cut safely. */
export function splitDeviceItems(text: string): DeviceSplit | undefined {
  // Anchors and aliases may cross entries; directives and markers make several documents.
  if (text.includes('&') || text.includes('*')) return undefined;
  const lines = text.split('\n');
  if (lines.some((line) => /^(---|\.\.\.|%)/.test(line))) return undefined;
  const keys = lines.flatMap((line, i) => (TOP_KEY.test(line) ? [i] : []));
  if (keys.length !== 1) return undefined;
  const start = keys[0];
  // The block runs until the next line at column 0 that is not blank or a comment.
  let end = start + 1;
  while (end < lines.length && (blank(lines[end]) || /^[ \t]/.test(lines[end]))) end += 1;
  const first = lines.slice(start + 1, end).find((line) => !blank(line));
  if (first === undefined || first.includes('\t')) return undefined;
  const indent = indentOf(first);
  if (!entryAt(first, indent)) return undefined;
  const items: string[] = [];
  let current: string[] | undefined;
  // Each piece ends with the line break its last line had: a kept (`|+`) block scalar keeps its
  // trailing lines, and a CR line end stays a line break rather than the end of a value.
  const close = (piece: string[], lastIndex: number) => items.push(piece.join('\n') + (lastIndex < lines.length - 1 ? '\n' : ''));
  for (let i = start + 1; i < end; i += 1) {
    const line = lines[i];
    if (entryAt(line, indent)) {
      if (current) close(current, i - 1);
      current = [line];
    } else if (blank(line)) {
      current?.push(line);
    } else if (indentOf(line) <= indent || /^ *\t/.test(line)) {
      // Something else at the entries' level (or tab-indented): not a plain sequence of entries.
      return undefined;
    } else {
      current?.push(line);
    }
  }
  if (current) close(current, end - 1);
  const before = lines.slice(0, start);
  const head = [...before, 'devices: []', ...lines.slice(end)].join('\n');
  const valueOffset = before.reduce((sum, line) => sum + line.length + 1, 0) + 'devices: '.length;
  return { head, valueOffset, items };
}
