// The demo's own log lines (pino JSON) as short readable lines for its live view (pure): a few
// messages a newcomer meets get a sentence saying what happened; the rest show their fields.
import { describeValue } from '../core/config/issues.js';

export interface DemoEvent {
  /** HH:MM:SS of the log line ('' when it had no time). */
  at: string;
  level: string;
  text: string;
}

const LEVEL_NAMES: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
/** Fields every line has, or that the line's text already shows. */
const PLUMBING = new Set(['level', 'time', 'service', 'pid', 'hostname', 'msg', 'component']);
/** A line longer than this is cut: the view has a screen, not a log file. */
const MAX_TEXT = 300;

type Fields = Record<string, unknown>;

function plain(value: unknown, depth = 0): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return depth > 0 ? `[${value.length} items]` : value.slice(0, 5).map((v) => plain(v, depth + 1)).join(', ') + (value.length > 5 ? `, ... (${value.length})` : '');
  if (typeof value === 'object') {
    if (depth > 0) return '{...}';
    const message = Reflect.get(value, 'message');
    if (typeof message === 'string') return message; // a serialised error: its message, never its stack
    return Object.entries(value).slice(0, 5).map(([k, v]) => `${k} ${plain(v, depth + 1)}`).join(', ');
  }
  return describeValue(value);
}

function sourceText(source: unknown): string {
  if (typeof source !== 'string') return '';
  if (source.startsWith('sync')) return ' (a value the cloud holds, read at start or reconnect)';
  if (source === 'push') return ' (pushed from the cloud)';
  if (source === 'command') return ' (in a command)';
  return ` (${source})`;
}

/** Sentences for the messages a demo shows on its first start; undefined: the generic form. */
const EXPLAINED: Record<string, (f: Fields) => string> = {
  'cloud write refused': (f) => `${plain(f.device)}: cloud value for ${plain(f.keys)} refused${sourceText(f.source)}: ${plain(f.reasons)}; nothing was written`
    + (Number(f.corrected) > 0 ? ', the device\'s own value was reported back to the cloud instead' : ''),
  'cloud values corrected from device': (f) => `${plain(f.points)}: the cloud held a value the device never took (${plain(f.reason)}); the device's value was reported back`,
  'health endpoint could not start; continuing without it': (f) => {
    const err = f.err as Fields | undefined;
    const inUse = typeof err === 'object' && err !== null && err.code === 'EADDRINUSE';
    return `health endpoint not started: ${inUse ? `port ${plain(f.port)} is in use (another demo, or the installed service?)` : plain(err)}; running without it (--health-port N picks another, 0 any free one)`;
  },
};

function generic(fields: Fields, msg: string): string {
  const rest = Object.entries(fields).filter(([k, v]) => !PLUMBING.has(k) && v !== undefined);
  const details = rest.map(([k, v]) => `${k} ${plain(v)}`).join(', ');
  const component = typeof fields.component === 'string' ? `${fields.component}: ` : '';
  return `${component}${msg}${details ? ` (${details})` : ''}`;
}

function cut(text: string): string {
  const oneLine = text.replace(/[\r\n\t]+/g, ' ').replace(/[\u0000-\u001f\u007f]/g, '');
  return oneLine.length > MAX_TEXT ? `${oneLine.slice(0, MAX_TEXT)}...` : oneLine;
}

/** One log line -> one readable event; a line that is not pino JSON is shown as it is. */
export function eventFromLogLine(line: string): DemoEvent | undefined {
  const text = line.trim();
  if (text === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // A cut or broken JSON line is not shown raw: only what it was.
    return { at: '', level: 'info', text: text.startsWith('{') ? `a log line that is not valid JSON (${text.length} characters)` : cut(text) };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { at: '', level: 'info', text: cut(text) };
  const fields = parsed as Fields;
  const level = LEVEL_NAMES[Number(fields.level)] ?? 'info';
  const at = typeof fields.time === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/.test(fields.time) ? fields.time.slice(11, 19) : '';
  const msg = typeof fields.msg === 'string' ? fields.msg : '(no message)';
  const explain = Object.hasOwn(EXPLAINED, msg) ? EXPLAINED[msg] : undefined;
  return { at, level, text: cut(explain ? explain(fields) : generic(fields, msg)) };
}

/** How the view prints an event. */
export function formatEvent(event: DemoEvent): string {
  return `${event.at ? `${event.at} ` : ''}${event.level === 'info' ? '' : `${event.level}: `}${event.text}`;
}
