// Page readers of the reload storm (reload-storm.test.ts): reads through the commissioning page's
// read API, some cut off mid-way (the connection closed before the answer). Every value that comes
// back is checked against the simulated device (storm-traffic.ts: between the unit's start and its
// count at the answer's arrival).
import { request as httpRequest } from 'node:http';
import type { Counter } from './storm-traffic.js';

export interface PageFigures {
  sent: number;
  /** 200 with the registers. */
  values: number;
  /** Closed by the reader before the answer came (all of them reads of the abandoned unit). */
  abandoned: number;
  /** Reads of the abandoned unit answered before the reader closed them. */
  abandonedUnitValues: number;
  /** Any other answer, by HTTP status (429 busy or rate limited, 502 the device failed...). */
  refused: Record<number, number>;
}

export class PageReaders {
  readonly figures: PageFigures = { sent: 0, values: 0, abandoned: 0, abandonedUnitValues: 0, refused: {} };
  readonly wrong: string[] = [];
  /** The first refusal of each HTTP status, as the page gave it. */
  readonly refusals = new Map<number, string>();
  private running = true;
  private readonly loops: Promise<void>[] = [];

  /**
   * `abandonedUnit`: the unit of every read that is cut off, read by nobody else, so what reached
   * its line tells how many cut-off reads left the queue unsent.
   */
  constructor(private readonly port: number, private readonly session: { cookie: string; csrf: string }, private readonly counter: Counter,
    private readonly units: readonly number[], readonly abandonedUnit: number) {}

  /** `readers` loops of reads; every `abandonEvery`-th read is of the abandoned unit, cut off 0..`abandonAfterMs` ms after it was sent. */
  start(readers: number, abandonEvery: number, abandonAfterMs: number): void {
    for (let r = 0; r < readers; r += 1) this.loops.push((async () => {
      for (let i = r; this.running; i += 1) {
        if (i % abandonEvery === 0) await this.read(this.abandonedUnit, Math.random() * abandonAfterMs);
        else await this.read(this.units[i % this.units.length]!, undefined);
      }
    })());
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /** `count` reads at once (after stop()): their HTTP statuses. */
  burst(count: number): Promise<number[]> {
    return Promise.all(Array.from({ length: count }, (_, i) => this.read(this.units[i % this.units.length]!, undefined)));
  }

  /** Resolves with the HTTP status, 0 when abandoned or failed. */
  private read(unit: number, abandonAfterMs: number | undefined): Promise<number> {
    const body = JSON.stringify({ bus: 'a', unit, table: 'holding', address: 5, count: 2 });
    this.figures.sent += 1;
    return new Promise((resolve) => {
      let settled = false;
      let status = 0;
      const done = () => {
        if (settled) return;
        settled = true;
        resolve(status);
      };
      const req = httpRequest({
        host: '127.0.0.1', port: this.port, path: '/api/read', method: 'POST', agent: false,
        headers: {
          Host: `127.0.0.1:${this.port}`, Cookie: this.session.cookie, 'X-CSRF-Token': this.session.csrf,
          'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body),
        },
      }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          if (!settled) {
            status = res.statusCode ?? 0;
            this.answered(unit, status, text);
          }
          done();
        });
        res.on('error', done);
      });
      req.on('error', () => {
        if (!settled) this.figures.abandoned += 1;
        done();
      });
      if (abandonAfterMs !== undefined) {
        setTimeout(() => {
          if (settled) return;
          this.figures.abandoned += 1;
          settled = true;
          req.destroy();
          resolve(0);
        }, abandonAfterMs);
      }
      req.end(body);
    });
  }

  private answered(unit: number, status: number, text: string): void {
    if (status !== 200) {
      this.figures.refused[status] = (this.figures.refused[status] ?? 0) + 1;
      if (!this.refusals.has(status)) this.refusals.set(status, text.slice(0, 200));
      return;
    }
    const raw = (JSON.parse(text) as { raw?: number[] }).raw ?? [];
    const value = (raw[0] ?? 0) * 65536 + (raw[1] ?? 0);
    const deviceNow = this.counter.now(unit);
    if (raw.length !== 2 || value < this.counter.start(unit) || value > deviceNow) this.wrong.push(`page read of unit ${unit}: ${JSON.stringify(raw)}, the device counts ${deviceNow}`);
    this.figures.values += 1;
    if (unit === this.abandonedUnit) this.figures.abandonedUnitValues += 1;
  }
}
