// Who may cancel a bus's requests: each request can carry its owner's AbortSignal (a share
// client's connection, a page request). One 'abort' listener per signal however many of its
// requests are waiting (Node warns past 10 listeners on one signal), removed with the owner's
// last request, so nothing of an owner stays once its requests settled.

export class RequestOwners<J> {
  private readonly owners = new Map<AbortSignal, { jobs: Set<J>; listener: () => void }>();

  /** `cancel`: called for each of an owner's unsettled requests when its signal aborts. */
  constructor(private readonly cancel: (job: J) => void) {}

  /** Owners with requests unsettled (a test's view of the bus's memory). */
  get size(): number {
    return this.owners.size;
  }

  add(signal: AbortSignal, job: J): void {
    let owner = this.owners.get(signal);
    if (!owner) {
      const jobs = new Set<J>();
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

  /** The request settled: its owner forgets it (and the signal its listener when it was the last). */
  settled(signal: AbortSignal, job: J): void {
    const owner = this.owners.get(signal);
    if (!owner) return;
    owner.jobs.delete(job);
    if (owner.jobs.size > 0) return;
    this.owners.delete(signal);
    signal.removeEventListener('abort', owner.listener);
  }
}
