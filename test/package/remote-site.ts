// test:package's remote configuration on the installed package: fieldgate's own identity answers
// site_get / site_apply / site_confirm through interface B's command/sync/send of the emulator (as a
// cloud application sends them), the confirmed generation is written under /var/lib/fieldgate/site
// by the service's user, and after a restart of the service it is what runs (site_get's digest is
// the applied one; the seed in /etc/fieldgate is unchanged).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_KEY } from '../integration/emulator/helpers.js';
import { waitFor } from '../helpers/wait.js';
import type { RunningDaemon } from './daemon.js';
import { SITE, STATE, check, mode } from './harness.js';

/** The own identity's token in the emulator's seed (config/emulator-seed.yaml, `dev-fieldgate`). */
export const OWN_TOKEN = 'demo-gateway-token';

type Params = Record<string, unknown>;

/** One command through command/sync/send; undefined while the identity's link is not up (no reply). */
async function send(httpPort: number, method: string, params: Params = {}): Promise<Params | undefined> {
  const res = await fetch(`http://127.0.0.1:${httpPort}/app/device/v1/${OWN_TOKEN}/command/sync/send`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', 'Project-Key': PROJECT_KEY },
    body: JSON.stringify({ method, params, id: Date.now() % 1_000_000 }),
  }).catch(() => undefined);
  if (!res) return undefined;
  const body = (await res.json().catch(() => ({}))) as { result?: number; command?: { params?: Params } };
  return body.result === 1 ? body.command?.params : undefined;
}

const answered = (httpPort: number, method: string, params: Params = {}) =>
  waitFor(() => send(httpPort, method, params), { timeoutMs: 60_000, intervalMs: 500, what: `a reply to ${method} through command/sync/send` });

/** Returns the daemon running after the restart. */
export async function remoteApplySurvivesRestart(httpPort: number, daemon: RunningDaemon, restart: () => Promise<RunningDaemon>): Promise<RunningDaemon> {
  const seed = readFileSync(SITE);
  const got = await answered(httpPort, 'site_get');
  const text = String(got.text ?? '');
  const edited = text.replace(/(name: pkg-meter-3[\s\S]*?pollIntervalMs: )(\d+)ms/, (_all, head: string, ms: string) => `${head}${Number(ms) + 100}ms`);
  check(text.includes('{{secret-') && !text.includes('pkg-meter-3-token') && edited !== text, `site_get through command/sync/send: generation ${String(got.generation)}, digest ${String(got.digest).slice(0, 12)}, secrets as placeholders`);
  const applied = await answered(httpPort, 'site_apply', { text: edited, baseDigest: got.digest, confirmWithinS: 120 });
  check(applied.outcome === 'awaiting_confirm', `site_apply with a 120 s window: ${String(applied.outcome)}, generation ${String(applied.generation)} (${JSON.stringify(applied.problems ?? applied.mustComeUp ?? '')})`);
  // A confirm is taken once the changed device's link is up again: asked until it is.
  const confirmed = await waitFor(async () => {
    const reply = await send(httpPort, 'site_confirm');
    return reply?.outcome === 'confirmed' ? reply : undefined;
  }, { timeoutMs: 90_000, intervalMs: 1000, what: 'site_confirm taken' });
  const file = join(STATE, 'site', `generation-${String(applied.generation)}.yaml`);
  check(confirmed.generation === applied.generation && mode(file) === '0600 fieldgate:fieldgate',
    `site_confirm: generation ${String(confirmed.generation)} confirmed, its text ${file} written by the service (${mode(file)})`);
  check(await daemon.stop() === 0, 'the daemon stopped cleanly after the confirmed remote change');
  const restarted = await restart();
  const after = await answered(httpPort, 'site_get');
  check(after.digest === applied.digest && after.generation === applied.generation && after.state === 'confirmed' && readFileSync(SITE).equals(seed),
    `after a restart the confirmed generation runs: site_get generation ${String(after.generation)}, digest ${String(after.digest).slice(0, 12)} (applied ${String(applied.digest).slice(0, 12)}), ${String(after.reason)}; ${SITE} unchanged`);
  const status = (await restarted.status()).config?.site;
  check(status?.generation === applied.generation && status?.file === file, `/status config.site: generation ${String(status?.generation)}, ${status?.file ?? '-'}`);
  return restarted;
}
