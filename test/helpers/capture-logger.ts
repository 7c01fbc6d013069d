// A real pino logger whose lines are kept in memory, to assert "logged once per transition".
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/ops/log.js';

export interface CapturedLog {
  logger: Logger;
  lines(): Array<Record<string, unknown>>;
  count(msg: string): number;
}

export function captureLogger(): CapturedLog {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      callback();
    },
  });
  const logger = createLogger({ level: 'debug', destination });
  return {
    logger,
    lines: () => lines,
    count: (msg) => lines.filter((line) => line.msg === msg).length,
  };
}
