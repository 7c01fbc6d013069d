// The emulated cloud's clock: Unix ms, as a cloud server stamps values and expires tokens with its
// own wall clock (the gateway's monotonic clock is not the cloud's). Tests pass a manual one.
export interface CloudClock {
  now(): number;
}

export const cloudWallClock: CloudClock = { now: () => Date.now() };
