// Root pino logger: JSON lines on stdout for journald, secrets redacted wherever they appear.
import { pino } from 'pino';
import { LOG_LEVELS, type LevelWithSilent, type Logger } from '../core/logger.js';
import { redactUrlCredentials, type SecretValues } from '../core/redact.js';
import type { LogComponent } from '../core/config/log-levels.js';

export { LOG_LEVELS, type Logger };
export { parseComponentLevels } from '../core/config/log-levels.js';

/** Field names whose values never reach a log line. */
export const REDACTED_KEYS = [
  'access_token', 'accessToken', 'project_key', 'projectKey', 'secret_key', 'secretKey',
  'access_key', 'accessKey', 'password', 'token', 'authorization', 'Authorization', 'credential',
  'credentials', 'Project-Key',
];

function redactPaths(): string[] {
  const paths: string[] = [];
  for (const key of REDACTED_KEYS) {
    const safe = /^[A-Za-z_$][\w$]*$/.test(key) ? key : `["${key}"]`;
    const join = (prefix: string) => (safe.startsWith('[') ? `${prefix}${safe}` : `${prefix}.${safe}`);
    paths.push(safe.startsWith('[') ? safe : key, join('*'), join('*.*'));
  }
  return paths;
}

export interface LoggerOptions {
  level?: LevelWithSilent;
  destination?: NodeJS.WritableStream;
  /** Known secret values, removed from every line whatever field (or foreign text) carries them. */
  secrets?: SecretValues;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const secrets = options.secrets;
  const level = options.level ?? ((process.env.LOG_LEVEL as LevelWithSilent | undefined) ?? 'info');
  return pino(
    {
      level,
      base: { service: 'fieldgate' },
      redact: { paths: redactPaths(), censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Last line of defence: URL credentials and known secrets inside any text, e.g. a server's error body.
      hooks: { streamWrite: secrets ? (line) => secrets.redact(line) : redactUrlCredentials },
    },
    options.destination ?? process.stdout,
  );
}

/** A logger that discards everything (tests of orchestrators). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

/** A child logger tagged with its component, at the component's own level when one is set. */
export function componentLogger(root: Logger, component: LogComponent, levels?: ReadonlyMap<string, LevelWithSilent>): Logger {
  const level = levels?.get(component);
  return level ? root.child({ component }, { level }) : root.child({ component });
}
