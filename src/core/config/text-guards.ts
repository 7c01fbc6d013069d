// Bounds a site file before any parser sees it: size, encoding and nesting depth (pure).
// Messages describe the file, never quote it: a site file holds secrets.
import type { ConfigIssue } from './site-types.js';

export interface SiteTextLimits {
  /** A larger file is refused unread (bytes). */
  maxBytes: number;
  /** Deeper nesting of mappings/lists is refused before parsing (the parsers recurse). */
  maxDepth: number;
}

export const SITE_TEXT_DEFAULTS: SiteTextLimits = { maxBytes: 4 * 1024 * 1024, maxDepth: 64 };

const LIMIT_ENV = { maxBytes: 'FIELDGATE_SITE_MAX_BYTES', maxDepth: 'FIELDGATE_SITE_MAX_DEPTH' } as const;

/** The limits, each overridable by its environment variable; a bad value is an issue. */
export function siteTextLimits(env: NodeJS.ProcessEnv, issues: ConfigIssue[]): SiteTextLimits {
  const limits = { ...SITE_TEXT_DEFAULTS };
  for (const key of ['maxBytes', 'maxDepth'] as const) {
    const name = LIMIT_ENV[key];
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const value = Number(raw);
    if (Number.isInteger(value) && value >= 1) limits[key] = value;
    else issues.push({ path: name, message: `must be a positive integer (got ${JSON.stringify(raw.slice(0, 20))})` });
  }
  return limits;
}

/** UTF-8 text of the file, or the one issue that says why it is not a site file. */
export function decodeSiteBytes(bytes: Uint8Array, file: string, limits: SiteTextLimits): { text?: string; issue?: ConfigIssue } {
  if (bytes.length > limits.maxBytes) {
    return { issue: { path: file, message: `file is larger than the ${limits.maxBytes} byte limit (${LIMIT_ENV.maxBytes})` } };
  }
  const utf16 = (bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)
    || (bytes.length >= 2 && (bytes[0] === 0 || bytes[1] === 0));
  if (utf16) return { issue: { path: file, message: 'file is UTF-16 encoded; save it as UTF-8' } };
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { issue: { path: file, message: 'file is not UTF-8 text (binary or another encoding); save it as UTF-8' } };
  }
  if (text.includes('\u0000')) return { issue: { path: file, message: 'file contains NUL bytes (binary, not a site file)' } };
  return { text: text.replace(/^\uFEFF/, '') };
}

/**
 * An upper estimate of the nesting depth of YAML or JSON text, without recursion: flow brackets
 * outside quotes and comments, plus block levels from indentation and "- " list markers.
 */
export function estimateDepth(text: string, stopAbove = Infinity): { depth: number; line: number } {
  let deepest = { depth: 0, line: 1 };
  const indents: number[] = [];
  let flow = 0;
  let quote: string | undefined;
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n];
    let column = 0;
    if (flow === 0 && quote === undefined) {
      while (column < line.length && line[column] === ' ') column++;
      if (column === line.length || line[column] === '#') continue;
      while (indents.length > 0 && indents[indents.length - 1] >= column) indents.pop();
      indents.push(column);
      // "- - - x": each marker opens one more list on the same line.
      while (line[column] === '-' && (line[column + 1] === ' ' || column + 1 === line.length)) {
        column += 2;
        indents.push(column - 1);
      }
    }
    for (let i = column; i < line.length; i++) {
      const c = line[i];
      if (quote !== undefined) {
        if (c === '\\' && quote === '"') i++;
        else if (c === quote) quote = undefined;
      } else if (c === '"' || (c === "'" && (i === 0 || /[\s[{,:]/.test(line[i - 1])))) {
        quote = c;
      } else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]))) {
        break;
      } else if (c === '[' || c === '{') {
        flow++;
      } else if ((c === ']' || c === '}') && flow > 0) {
        flow--;
      }
      if (indents.length + flow > deepest.depth) deepest = { depth: indents.length + flow, line: n + 1 };
    }
    if (indents.length + flow > deepest.depth) deepest = { depth: indents.length + flow, line: n + 1 };
    if (deepest.depth > stopAbove) break;
  }
  return deepest;
}

export function depthIssue(text: string, file: string, limits: SiteTextLimits): ConfigIssue | undefined {
  const { depth, line } = estimateDepth(text, limits.maxDepth);
  if (depth <= limits.maxDepth) return undefined;
  return { path: `${file}:${line}`, message: `nested more than ${limits.maxDepth} levels deep (${LIMIT_ENV.maxDepth}); a site file needs far fewer` };
}
