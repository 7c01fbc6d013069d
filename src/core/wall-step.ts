// Notices a step of the wall clock (NTP setting a Pi's clock at boot, or correcting it later) by
// comparing it with the monotonic clock (pure: both readings passed in). Nothing waits on the wall
// clock, so a step changes no schedule; it is only worth one log line, with its size.
import { asEpoch, type EpochMs, type MonoMs } from './time.js';

/** Changes of (wall - monotonic) at least this large are steps; NTP's slewing moves it by 0.5 ms/s at most. */
export const WALL_STEP_THRESHOLD_MS = 2000;

export interface WallStep {
  /** Positive: the wall clock jumped forward. */
  stepMs: number;
  /** Where the wall clock would be without the step, and where it is. */
  expectedWall: EpochMs;
  wall: EpochMs;
}

export class WallStepWatch {
  private offset: number | undefined;
  private steps = 0;

  constructor(private readonly thresholdMs = WALL_STEP_THRESHOLD_MS) {}

  /** One reading of both clocks; the step since the previous reading, when there was one. */
  observe(mono: MonoMs, wall: EpochMs): WallStep | undefined {
    const offset = wall - mono;
    const previous = this.offset;
    this.offset = offset;
    if (previous === undefined || Math.abs(offset - previous) < this.thresholdMs) return undefined;
    this.steps += 1;
    return { stepMs: Math.round(offset - previous), expectedWall: asEpoch(mono + previous), wall };
  }

  /** Steps seen since start. */
  count(): number {
    return this.steps;
  }
}
