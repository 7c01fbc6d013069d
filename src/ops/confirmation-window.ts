// The confirmation window of a remote change (docs/remote-config.md): which generation awaits a
// site_confirm, which generation it goes back to, what must come up before a confirm is taken,
// and the deadline (monotonic) at which it goes back by itself. One window at a time.
import type { MonoMs, TimeWithWall } from '../core/time.js';

/** Buses added or restarted and changed devices' own links: each must be up before a confirm. */
export interface PartsToWatch {
  buses: string[];
  links: string[];
}

export interface OpenWindow {
  readonly generation: number;
  /** The generation that runs again when this one is rolled back. */
  readonly back: number;
  readonly watch: PartsToWatch;
  readonly windowS: number;
}

export interface WindowParts {
  time: TimeWithWall;
  busUp(name: string): boolean;
  linkUp(device: string): boolean;
  /** The window of `generation` ended without a confirm: go back (the caller checks it is still open). */
  expired(window: OpenWindow, reason: string): void;
}

export class ConfirmationWindow {
  private open: (OpenWindow & { deadline: MonoMs; cancel(): void }) | undefined;

  constructor(private readonly parts: WindowParts) {}

  /** The window open now, if any. */
  current(): OpenWindow | undefined {
    return this.open;
  }

  start(window: OpenWindow): void {
    this.close();
    const { time } = this.parts;
    const cancel = time.setTimer(() => this.onDeadline(window.generation), window.windowS * 1000);
    this.open = { ...window, deadline: (time.now() + window.windowS * 1000) as MonoMs, cancel };
  }

  /** Ends the window (confirmed, rolled back, replaced, or fieldgate stopping); its timer too. */
  close(): void {
    this.open?.cancel();
    this.open = undefined;
  }

  /** Parts the generation changed that are not up (yet), as the reason names them. */
  notUp(): string[] {
    const open = this.open;
    if (!open) return [];
    return [
      ...open.watch.buses.filter((bus) => !this.parts.busUp(bus)).map((bus) => `bus ${bus}`),
      ...open.watch.links.filter((device) => !this.parts.linkUp(device)).map((device) => `the cloud link of ${device}`),
    ];
  }

  /** When the window ends, in wall-clock time for the cloud (the deadline itself is monotonic). */
  confirmByIso(): string | undefined {
    const open = this.open;
    if (!open) return undefined;
    const { time } = this.parts;
    return new Date(time.wallNow() + Math.max(0, open.deadline - time.now())).toISOString();
  }

  private onDeadline(generation: number): void {
    const open = this.open;
    if (open?.generation !== generation) return;
    const down = this.notUp();
    this.parts.expired(open, `not confirmed within ${open.windowS} s${down.length > 0 ? `; not up: ${down.join(', ')}` : ''}`);
  }
}
