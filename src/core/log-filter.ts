// Which journal lines `fieldgate logs` shows (pure): the daemon's pino JSON lines, by device and
// by minimum level. Lines that are not the daemon's JSON (systemd's own "Started ..." lines, a
// crash trace) are always shown: hiding them would hide why the service stopped.
import { LOG_LEVELS, type LevelWithSilent } from './logger.js';

/** pino's numeric level of each name. */
export const LEVEL_NUMBERS: Readonly<Record<Exclude<LevelWithSilent, 'silent'>, number>> = {
  trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60,
};

export interface LogFilter {
  /** Only entries whose `device` field is this name (entries without one are left out). */
  device?: string;
  /** Only entries at this level or above. */
  minLevel?: number;
}

export type LogLine = { kind: 'entry'; entry: Record<string, unknown> } | { kind: 'text'; text: string };

/** One journal line: a JSON object (the daemon's entry) or anything else, kept as text. */
export function parseLogLine(line: string): LogLine {
  if (line.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(line);
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return { kind: 'entry', entry: parsed as Record<string, unknown> };
    } catch {
      // not JSON after all: shown as text
    }
  }
  return { kind: 'text', text: line };
}

export function wanted(line: LogLine, filter: LogFilter): boolean {
  if (line.kind === 'text') return true;
  if (filter.device !== undefined && line.entry.device !== filter.device) return false;
  if (filter.minLevel !== undefined && !(typeof line.entry.level === 'number' && line.entry.level >= filter.minLevel)) return false;
  return true;
}

/** The number of a level name, or undefined when it is not one of pino's (silent is not a filter). */
export function levelNumber(name: string): number | undefined {
  if (!LOG_LEVELS.includes(name as LevelWithSilent) || name === 'silent') return undefined;
  return LEVEL_NUMBERS[name as Exclude<LevelWithSilent, 'silent'>];
}
