// Where the demo's gateway logs go: not the terminal (raw JSON in the middle of the live view) but
// this stream, which keeps the latest events as readable lines for the view to show.
import { Writable } from 'node:stream';
import { eventFromLogLine, formatEvent, type DemoEvent } from './events.js';

export interface EventLogLimits {
  /** Events kept for the view. */
  keep: number;
  /** A line longer than this (without its newline) is taken as it is so far. */
  maxLineChars: number;
}

export class DemoEventLog extends Writable {
  private partial = '';
  private readonly kept: DemoEvent[] = [];
  private count = 0;

  constructor(private readonly limits: EventLogLimits = { keep: 6, maxLineChars: 64 * 1024 }) {
    super({ decodeStrings: false });
  }

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    const lines = (this.partial + chunk.toString()).split('\n');
    this.partial = lines.pop() ?? '';
    if (this.partial.length > this.limits.maxLineChars) {
      lines.push(this.partial);
      this.partial = '';
    }
    for (const line of lines) this.add(line);
    done();
  }

  private add(line: string): void {
    const event = eventFromLogLine(line.slice(0, this.limits.maxLineChars));
    if (!event) return;
    this.count += 1;
    this.kept.push(event);
    if (this.kept.length > this.limits.keep) this.kept.shift();
  }

  /** The latest events, oldest first, as the view prints them. */
  latest(): string[] {
    return this.kept.map(formatEvent);
  }

  /** Events seen in all (the view says how many it does not show). */
  get total(): number {
    return this.count;
  }
}
