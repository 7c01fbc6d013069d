// A pino logger whose lines are kept in memory (asserting on transitions and redaction).
import { createLogger, type Logger } from '../../src/ops/log.js';

export interface CapturedLog {
  log: Logger;
  lines: () => Record<string, unknown>[];
  messages: (msg: string) => Record<string, unknown>[];
  raw: () => string;
}

export function captureLog(): CapturedLog {
  const chunks: string[] = [];
  const destination = { write: (line: string) => { chunks.push(line); return true; } } as unknown as NodeJS.WritableStream;
  const log = createLogger({ level: 'debug', destination });
  const lines = () => chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  return { log, lines, messages: (msg) => lines().filter((l) => l.msg === msg), raw: () => chunks.join('') };
}
