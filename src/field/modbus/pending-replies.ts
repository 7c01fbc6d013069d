// The requests of one transport still awaiting an answer: each fails at once when its port closes.
import { mapLibraryError } from './library-errors.js';

export class PendingReplies {
  /** Rejecters of requests awaiting an answer, with the unit each went to (-1: raw bytes). */
  private readonly pending = new Map<(err: Error) => void, number>();

  /** The library's promise, failed at once when the port closes under it. */
  settleOnClose<T>(call: Promise<T>, unit: number, timeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const finish = (done: () => void) => {
        if (settled) return;
        settled = true;
        this.pending.delete(fail);
        done();
      };
      const fail = (err: Error) => finish(() => reject(err));
      this.pending.set(fail, unit);
      call.then((value) => finish(() => resolve(value)), (err: unknown) => fail(mapLibraryError(err, unit, timeoutMs)));
    });
  }

  /** A promise that only rejects, when the port closes before `release` is called. */
  untilClosed(unit: number): { closed: Promise<never>; release: () => void } {
    let fail: (err: Error) => void = () => undefined;
    const closed = new Promise<never>((_, reject) => {
      fail = reject;
      this.pending.set(fail, unit);
    });
    return { closed, release: () => this.pending.delete(fail) };
  }

  /** Fails every waiting request with the same error. */
  failAll(err: Error): void {
    for (const reject of this.pending.keys()) reject(err);
    this.pending.clear();
  }

  /** Fails every waiting request with an error made for its unit. */
  failEach(errorFor: (unit: number) => Error): void {
    for (const [reject, unit] of this.pending) reject(errorFor(unit));
    this.pending.clear();
  }
}
