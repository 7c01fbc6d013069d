// FIELDGATE_LOG_LEVELS=bus=debug,cloud=warn: a log level per component (pure). A typo is a config
// error like any other, so a level that would silently not apply is never accepted.
import { LOG_LEVELS, type LevelWithSilent } from '../logger.js';
import { describeValue } from './issues.js';
import type { ConfigIssue } from './site-types.js';

/** The components whose loggers honour a level of their own (src/main.ts wires them). */
export const LOG_COMPONENTS = ['bus', 'poller', 'reporter', 'commands', 'cloud', 'health', 'reload', 'web'] as const;
export type LogComponent = (typeof LOG_COMPONENTS)[number];

export const LOG_LEVELS_ENV = 'FIELDGATE_LOG_LEVELS';

export function isLogComponent(name: string): name is LogComponent {
  return (LOG_COMPONENTS as readonly string[]).includes(name);
}

/** The levels of every valid entry, and one issue per entry that is not. */
export function parseComponentLevels(text: string | undefined): { levels: Map<LogComponent, LevelWithSilent>; issues: ConfigIssue[] } {
  const levels = new Map<LogComponent, LevelWithSilent>();
  const issues: ConfigIssue[] = [];
  const problem = (entry: string, message: string) => issues.push({ path: LOG_LEVELS_ENV, message: `${describeValue(entry)}: ${message}` });
  for (const entry of (text ?? '').split(',').map((part) => part.trim()).filter(Boolean)) {
    const equals = entry.indexOf('=');
    const component = equals < 0 ? '' : entry.slice(0, equals).trim();
    const level = equals < 0 ? '' : entry.slice(equals + 1).trim();
    if (component === '' || level === '') problem(entry, `want component=level, e.g. bus=debug (components: ${LOG_COMPONENTS.join(', ')})`);
    else if (!isLogComponent(component)) problem(entry, `unknown component ${describeValue(component)} (components: ${LOG_COMPONENTS.join(', ')})`);
    else if (!(LOG_LEVELS as readonly string[]).includes(level)) problem(entry, `unknown level ${describeValue(level)} (levels: ${LOG_LEVELS.join(', ')})`);
    else if (levels.has(component)) problem(entry, `${component} is given a level twice`);
    else levels.set(component, level as LevelWithSilent);
  }
  return { levels, issues };
}
