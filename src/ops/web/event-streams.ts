// The page's live updates as server-sent events. At most `maxClients` streams at once (more are
// refused by the caller); a client whose unsent data passes `maxBufferedBytes` is dropped, never
// buffered without bound. The one timer (the overview's status every `statusPeriodMs` and a
// keep-alive comment for device pages) and the feed listener run only while a stream is open.
import type { ServerResponse } from 'node:http';
import type { Logger } from '../log.js';
import type { LineCapture } from '../../field/modbus/line-capture.js';
import type { DeviceEvent, LiveFeed } from './live-feed.js';

/** A quiet stream gets a comment about this often, whatever the status period (proxies close idle ones). */
const KEEPALIVE_MS = 20_000;

interface Client {
  res: ServerResponse;
  /** The device page's device; undefined for the overview and the line page. */
  device?: string;
  /** The line page: stops watching its line (capture runs only while watched). */
  stopWatch?: () => void;
}

export class EventStreams {
  private readonly clients = new Set<Client>();
  private timer: NodeJS.Timeout | undefined;
  private ticks = 0;
  private stopListening: (() => void) | undefined;
  private dropped = 0;
  private readonly keepaliveTicks: number;

  constructor(
    private readonly maxClients: number,
    private readonly feed: LiveFeed | undefined,
    private readonly status: () => unknown,
    private readonly log: Logger,
    private readonly statusPeriodMs: number,
    /** Unsent bytes a stream may hold before its client counts as too slow and is dropped. */
    private readonly maxBufferedBytes: number,
  ) {
    this.keepaliveTicks = Math.max(1, Math.round(KEEPALIVE_MS / statusPeriodMs));
  }

  get size(): number {
    return this.clients.size;
  }

  /** False when the bound is reached (the caller answers 503). */
  open(res: ServerResponse, device: string | undefined): boolean {
    if (this.clients.size >= this.maxClients) return false;
    const client: Client = device === undefined ? { res } : { res, device };
    this.clients.add(client);
    res.on('close', () => this.remove(client));
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' });
    res.write('retry: 5000\n\n');
    if (device === undefined) this.send(client, 'status', this.status());
    this.timer ??= setInterval(() => this.tick(), this.statusPeriodMs);
    if (device !== undefined && this.feed && !this.stopListening) this.stopListening = this.feed.listen((event) => this.onDeviceEvent(event));
    return true;
  }

  /** The line page: the frames kept, then each new one; the line is captured only while watched. */
  openLine(res: ServerResponse, capture: LineCapture): boolean {
    if (this.clients.size >= this.maxClients) return false;
    const client: Client = { res };
    this.clients.add(client);
    res.on('close', () => this.remove(client));
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' });
    // A bus removed or restarted by a reload ends the stream; the browser's EventSource comes back
    // after `retry` and gets the restarted bus's capture (or 404 for a bus that is gone).
    res.write('retry: 1000\n\n');
    const watch = capture.watch((frame) => this.send(client, 'frame', frame), () => client.res.end());
    client.stopWatch = watch.stop;
    this.send(client, 'frames', watch.recent);
    this.timer ??= setInterval(() => this.tick(), this.statusPeriodMs);
    return true;
  }

  closeAll(): void {
    for (const client of [...this.clients]) client.res.destroy();
    this.clients.clear();
    this.idle();
  }

  private tick(): void {
    this.ticks++;
    const keepalive = this.ticks % this.keepaliveTicks === 0;
    let status: unknown;
    for (const client of [...this.clients]) {
      if (client.device === undefined && client.stopWatch === undefined) this.send(client, 'status', (status ??= this.status()));
      else if (keepalive) this.write(client, ': keep-alive\n\n');
    }
  }

  private onDeviceEvent(event: DeviceEvent): void {
    let data: string | undefined;
    for (const client of [...this.clients]) {
      if (client.device !== event.device) continue;
      data ??= `event: device\ndata: ${JSON.stringify(event)}\n\n`;
      this.write(client, data);
    }
  }

  private send(client: Client, event: string, payload: unknown): void {
    this.write(client, `event: ${event}\ndata: ${JSON.stringify(payload)}\n\n`);
  }

  private write(client: Client, text: string): void {
    if (client.res.writableLength > this.maxBufferedBytes) {
      this.dropped++;
      this.log.warn({ device: client.device, bufferedBytes: client.res.writableLength, dropped: this.dropped }, 'slow event-stream client dropped');
      client.res.destroy();
      this.remove(client);
      return;
    }
    client.res.write(text);
  }

  private remove(client: Client): void {
    if (!this.clients.delete(client)) return;
    client.stopWatch?.();
    if (this.clients.size === 0) this.idle();
    else if (![...this.clients].some((c) => c.device !== undefined)) this.unlisten();
  }

  private idle(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.unlisten();
  }

  private unlisten(): void {
    this.stopListening?.();
    this.stopListening = undefined;
  }
}
