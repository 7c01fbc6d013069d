// A plainly laid out YAML site file read and checked on the event loop, a device at a time in
// slices of ~10 ms, as a reload reads it: a worker thread's own V8 instance (site-file-reader.ts) costs the
// daemon ~65 MB more at a 1,000-device reload (docs/bench.md). Same checks as `run`; a file that
// cannot be cut per device (core/config/yaml-device-split.ts) is left to the worker.
import type { Config } from '../core/config/config.js';
import type { ConfigIssue } from '../core/config/site-types.js';
import { depthIssue, siteTextLimits } from '../core/config/text-guards.js';
import { checkConfigSteps, detachStrings, parseByDeviceSteps, readText, type HostCheck } from './site-file.js';
import { isMapping } from '../core/config/fields.js';
import type { Steps } from '../core/config/steps.js';

export interface SlicedReading {
  config?: Config;
  sha256?: string;
  issues: ConfigIssue[];
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** How long the reader runs before it gives the event loop a turn (a device's parse or check is ~1-5 ms). */
export const SLICE_MS = 10;

/** Runs `steps` on the event loop, a turn for other work whenever a slice has run `sliceMs`. */
async function inSlices<T>(steps: Steps<T>, sliceMs: number): Promise<T> {
  let sliceStart = performance.now();
  for (let step = steps.next(); ; step = steps.next()) {
    if (step.done) return step.value;
    if (performance.now() - sliceStart >= sliceMs) {
      await turn();
      sliceStart = performance.now();
    }
  }
}

/** detachStrings a device at a time, then the rest of the file (devices already copied are not walked again). */
function* detachByDevice(raw: unknown): Steps<unknown> {
  const seen = new Set<object>();
  const copies = new Map<string, string>();
  const devices = isMapping(raw) && Array.isArray(raw.devices) ? raw.devices : [];
  for (const device of devices) {
    detachStrings(device, seen, copies);
    yield;
  }
  return detachStrings(raw, seen, copies);
}

/**
 * Undefined when the file is not a plainly laid out YAML site (the caller reads it whole, elsewhere).
 * Parse, string copies and checks run a device at a time, in slices of `sliceMs` (0: a turn after each device).
 */
export async function readSiteInSlices(file: string, env: NodeJS.ProcessEnv, hostCheck: HostCheck, sliceMs = SLICE_MS): Promise<SlicedReading | undefined> {
  const limitIssues: ConfigIssue[] = [];
  const limits = siteTextLimits(env, limitIssues);
  if (limitIssues.length > 0) return { issues: limitIssues };
  const read = readText(file, limits);
  if (read.text === undefined) return { issues: read.issues };
  // Reading, the depth scan and the first parse step (the cut) are ~10-50 ms each at 1,000 devices: a turn between them.
  await turn();
  const body = read.text.replace(/^\uFEFF/, '');
  if (/\.json$/i.test(file) || body.trimStart().startsWith('{') || depthIssue(body, file, limits)) return undefined;
  await turn();
  let parsed: unknown;
  try {
    parsed = await inSlices(parseByDeviceSteps(body), sliceMs);
  } catch (err) {
    if (err instanceof RangeError) return undefined;
    throw err;
  }
  if (parsed === undefined) return undefined;
  await turn();
  try {
    const detached = await inSlices(detachByDevice(parsed), sliceMs);
    const checked = await inSlices(checkConfigSteps(detached, env, hostCheck), sliceMs);
    return checked.config ? { config: checked.config, ...(read.sha256 ? { sha256: read.sha256 } : {}), issues: [] } : { issues: checked.issues };
  } catch (err) {
    if (err instanceof RangeError) return { issues: [{ path: file, message: 'nested too deeply to check' }] };
    throw err;
  }
}
