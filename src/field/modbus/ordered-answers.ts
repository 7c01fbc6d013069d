// A share connection's answers leave in the order its requests came (Modbus TCP clients may
// pipeline, and some match answers by order, not by transaction id): an answer ready before an
// earlier one is held until that one has left.

export class OrderedAnswers {
  private nextSlot = 0;
  private nextToSend = 0;
  private readonly held = new Map<number, Buffer>();
  /** Bytes of answers held for an earlier one (bounded by the server: a client pipelining without end). */
  heldBytes = 0;

  constructor(private readonly send: (frame: Buffer) => void) {}

  /** The place of the next request's answer: call the result once with the answer's frame. */
  slot(): (frame: Buffer) => void {
    const slot = this.nextSlot++;
    return (frame) => {
      if (slot !== this.nextToSend) {
        this.held.set(slot, frame);
        this.heldBytes += frame.length;
        return;
      }
      this.send(frame);
      this.nextToSend += 1;
      for (let next = this.held.get(this.nextToSend); next; next = this.held.get(this.nextToSend)) {
        this.held.delete(this.nextToSend);
        this.heldBytes -= next.length;
        this.send(next);
        this.nextToSend += 1;
      }
    };
  }
}
