// One site (emulator + simulator) and gateway per test, closed after each, and the cloud's count of
// a device's connects: what the in-process system tests share (harness.ts stays free of vitest,
// the benchmarks use it too).
import { afterEach } from 'vitest';
import type { GatewayHandle } from '../../src/ops/gateway-handle.js';
import type { Site } from './harness.js';

/** The site and gateway of the test running: whatever of them was set is stopped and closed after each test. */
export function perTestSite(): { site: Site | undefined; gateway: GatewayHandle | undefined } {
  const held: { site: Site | undefined; gateway: GatewayHandle | undefined } = { site: undefined, gateway: undefined };
  afterEach(async () => {
    await held.gateway?.stop();
    await held.site?.close();
    held.gateway = undefined;
    held.site = undefined;
  });
  return held;
}

/** How many times the cloud registered a connect of `deviceId` (its own link, or announced by its gateway) from now on. */
export function countConnects(site: Site, deviceId: string): () => number {
  let connects = 0;
  const state = site.emulator.state;
  const markConnected = state.markConnected.bind(state);
  state.markConnected = (id, via) => {
    if (id === deviceId) connects += 1;
    return markConnected(id, via);
  };
  return () => connects;
}
