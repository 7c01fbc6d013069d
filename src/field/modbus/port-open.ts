// Opening a Modbus client within a deadline, so a port that never answers cannot hang a bus.
import type { Timers } from '../../core/time.js';
import { PortOpenError } from './errors.js';
import { destroyQuietly } from './library-errors.js';

/** How long a TCP connect or serial open may take before it counts as failed. */
const MIN_OPEN_TIMEOUT_MS = 3000;

type OpeningClient = Parameters<typeof destroyQuietly>[0] & { open(callback: (err: unknown) => void): void };

/** Opens `client` within max(3 s, twice the request timeout); on failure it is torn down and PortOpenError thrown. */
export async function openWithin(client: OpeningClient, target: string, requestTimeoutMs: number, timers: Timers): Promise<void> {
  const openTimeoutMs = Math.max(MIN_OPEN_TIMEOUT_MS, requestTimeoutMs * 2);
  let cancelOpenTimeout = (): void => undefined;
  const timedOut = new Promise<never>((_, reject) => {
    cancelOpenTimeout = timers.setTimer(() => reject(new Error(`no connection within ${openTimeoutMs} ms`)), openTimeoutMs);
  });
  const connecting = new Promise<void>((resolve, reject) => client.open((err: unknown) => (err ? reject(err) : resolve())));
  try {
    await Promise.race([connecting, timedOut]);
  } catch (err) {
    destroyQuietly(client);
    // An open that completes after its timeout would keep the port (and its lock) with no owner,
    // so every reopen would fail with "Cannot lock port": close it as soon as it is open.
    connecting.then(() => destroyQuietly(client), () => undefined);
    const reason = (err instanceof Error ? err.message : String(err)).replace(/^Error: /, '');
    throw new PortOpenError(target, reason, { cause: err });
  } finally {
    cancelOpenTimeout();
  }
}
