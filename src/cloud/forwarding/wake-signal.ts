// One waiter woken by the next signal: a pump parked on a full window wakes on an ack or a restart.
export class WakeSignal {
  private wake: (() => void) | undefined;

  wait(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
    });
  }

  fire(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
