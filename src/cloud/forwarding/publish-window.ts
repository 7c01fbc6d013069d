// The publishes of one forwarder awaiting their PUBACK, in order. A publish counts as acknowledged
// only once it and every earlier one are, so the outbox is acked by prefix and keeps its order.
// A link transition resets the window: callbacks of publishes made before it are ignored, and
// everything not yet acked is sent again from the outbox.
export interface PublishWindowHandlers<T> {
  /** The longest acknowledged prefix that grew, oldest first (never empty). */
  acked(items: T[]): void;
  /** A publish of the current generation failed: the link reports why; the forwarder resends. */
  failed(): void;
}

export class PublishWindow<T> {
  private inFlight: Array<{ item: T; done: boolean }> = [];
  private generation = 0;

  constructor(private readonly handlers: PublishWindowHandlers<T>) {}

  get size(): number {
    return this.inFlight.length;
  }

  /** What is awaiting PUBACK, oldest first. */
  items(): T[] {
    return this.inFlight.map((entry) => entry.item);
  }

  track(publish: Promise<unknown>, item: T): void {
    const entry = { item, done: false };
    this.inFlight.push(entry);
    const generation = this.generation;
    publish.then(
      () => {
        if (generation !== this.generation) return;
        entry.done = true;
        this.settle();
      },
      () => {
        if (generation === this.generation) this.handlers.failed();
      },
    );
  }

  /** Forgets what is in flight (link up, down or stop). */
  reset(): void {
    this.generation += 1;
    this.inFlight = [];
  }

  private settle(): void {
    const acked: T[] = [];
    while (this.inFlight.length > 0 && this.inFlight[0].done) acked.push((this.inFlight.shift() as { item: T }).item);
    if (acked.length > 0) this.handlers.acked(acked);
  }
}
