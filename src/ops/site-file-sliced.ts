// A plainly laid out YAML site file read and checked on the event loop, a few devices parsed per
// turn, as a reload reads it: a worker thread's own V8 instance (site-file-reader.ts) costs the
// daemon ~65 MB more at a 1,000-device reload (docs/bench.md). Same checks as `run`; a file that
// cannot be cut per device (core/config/yaml-device-split.ts) is left to the worker.
import type { Config } from '../core/config/config.js';
import type { ConfigIssue } from '../core/config/site-types.js';
import { depthIssue, siteTextLimits } from '../core/config/text-guards.js';
import { checkConfig, detachStrings, parseByDeviceSteps, readText, type HostCheck } from './site-file.js';

export interface SlicedReading {
  config?: Config;
  sha256?: string;
  issues: ConfigIssue[];
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Undefined when the file is not a plainly laid out YAML site (the caller reads it whole, elsewhere). */
export async function readSiteInSlices(file: string, env: NodeJS.ProcessEnv, hostCheck: HostCheck, devicesPerTurn = 5): Promise<SlicedReading | undefined> {
  const limitIssues: ConfigIssue[] = [];
  const limits = siteTextLimits(env, limitIssues);
  if (limitIssues.length > 0) return { issues: limitIssues };
  const read = readText(file, limits);
  if (read.text === undefined) return { issues: read.issues };
  const body = read.text.replace(/^\uFEFF/, '');
  if (/\.json$/i.test(file) || body.trimStart().startsWith('{') || depthIssue(body, file, limits)) return undefined;
  const steps = parseByDeviceSteps(body);
  let parsed: unknown;
  try {
    for (let step = steps.next(), n = 1; ; step = steps.next(), n += 1) {
      if (step.done) {
        parsed = step.value;
        break;
      }
      if (n % devicesPerTurn === 0) await turn();
    }
  } catch (err) {
    if (err instanceof RangeError) return undefined;
    throw err;
  }
  if (parsed === undefined) return undefined;
  await turn();
  try {
    const checked = checkConfig(detachStrings(parsed), env, hostCheck);
    return checked.config ? { config: checked.config, ...(read.sha256 ? { sha256: read.sha256 } : {}), issues: [] } : { issues: checked.issues };
  } catch (err) {
    if (err instanceof RangeError) return { issues: [{ path: file, message: 'nested too deeply to check' }] };
    throw err;
  }
}
