// Who may cancel a bus's requests: each request can carry its owner's AbortSignal (a share
// client's connection, a page request). When it aborts, the owner's requests still waiting leave
// the queue (or their pause before a repeat after "busy") and reject with RequestCancelledError,
// counted, never logged one by one; one on the line finishes (bus-request.ts perform() sends no
// further transaction of it). One 'abort' listener per signal however many of its requests wait
// (Node warns past 10 listeners on one signal), removed with the owner's last request, so nothing
// of an owner stays once its requests settled.
import type { Job } from './bus-types.js';
import { RequestCancelledError } from './errors.js';

export class JobOwners {
  private readonly owners = new Map<AbortSignal, { jobs: Set<Job>; listener: () => void }>();

  /** `takeOut`: removes a waiting job from the bus (false: it is on the line, or already done). */
  constructor(private readonly takeOut: (job: Job) => boolean, private readonly counters: { cancelled: number }) {}

  /** Owners with requests unsettled (a test's view of the bus's memory). */
  get size(): number {
    return this.owners.size;
  }

  /** The error for a request whose owner already left (counted), or undefined. */
  gone(signal: AbortSignal | undefined, unit: number): RequestCancelledError | undefined {
    if (signal?.aborted !== true) return undefined;
    this.counters.cancelled += 1;
    return new RequestCancelledError(unit);
  }

  /** The settle functions of a job that forget it here when it settles. */
  settling<T>(signal: AbortSignal | undefined, job: () => Job, resolve: (value: T) => void, reject: (err: unknown) => void):
    [(value: T) => void, (err: unknown) => void] {
    if (!signal) return [resolve, reject];
    return [(value) => { this.settled(signal, job()); resolve(value); }, (err) => { this.settled(signal, job()); reject(err); }];
  }

  /** The job is queued: its owner's abort takes it out. */
  watch(job: Job): void {
    const signal = job.signal;
    if (!signal) return;
    let owner = this.owners.get(signal);
    if (!owner) {
      const jobs = new Set<Job>();
      const listener = () => {
        this.owners.delete(signal);
        for (const each of jobs) this.cancel(each);
      };
      owner = { jobs, listener };
      this.owners.set(signal, owner);
      signal.addEventListener('abort', listener, { once: true });
    }
    owner.jobs.add(job);
  }

  /** A job that went no further than a transaction between two of its own (perform() stopped it). */
  stoppedBetween(job: Job, err: RequestCancelledError): void {
    this.counters.cancelled += 1;
    job.reject(err);
  }

  private cancel(job: Job): void {
    if (!this.takeOut(job)) return;
    this.counters.cancelled += 1;
    job.reject(new RequestCancelledError(job.unit));
  }

  private settled(signal: AbortSignal, job: Job): void {
    const owner = this.owners.get(signal);
    if (!owner) return;
    owner.jobs.delete(job);
    if (owner.jobs.size > 0) return;
    this.owners.delete(signal);
    signal.removeEventListener('abort', owner.listener);
  }
}
