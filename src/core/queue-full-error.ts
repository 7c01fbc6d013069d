// The one "queue full" refusal, for the bus request queue and the cloud (interface A/B) queue:
// overload is shed and counted at the door, never queued without bound.

export class QueueFullError extends Error {
  override readonly name = 'QueueFullError';
  /** `queue` names the queue in the message ("bus line1", "cloud request"). */
  constructor(readonly queue: string, readonly limit: number) {
    super(`${queue} queue is full (${limit} requests waiting)`);
  }
}
