// The logger as every layer sees it: a type and the level names, no output. ops/log.ts creates the
// pino logger (JSON lines, redaction) at the composition root and hands it down.
import type { Logger, LevelWithSilent } from 'pino';

export type { Logger, LevelWithSilent };

/** The one list of log levels (pino's), for the site file, FIELDGATE_LOG_LEVELS and `simulate --log-level`. */
export const LOG_LEVELS: readonly LevelWithSilent[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
