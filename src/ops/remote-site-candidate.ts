// An edited site text as remote configuration reads it: placeholders put back, read by the
// reload's own reader from a file in the store, planned by the reload's planner; every problem
// with the text's secrets as placeholders and the file named `site`.
import type { Config } from '../core/config/config.js';
import { planSiteChange } from '../core/config/remote-site-rules.js';
import { redactIssues, redactSiteText, restoreSiteSecrets, writtenSecrets } from '../core/config/site-secrets.js';
import type { ConfigIssue } from '../core/config/site-types.js';
import type { RemoteSiteDeps, SiteReading } from './remote-site-types.js';

/** How a site text is named in problems. */
export const SITE_LABEL = 'site';

/** The edited text with its placeholders restored, read by the reload's reader, and its plan. */
export async function readCandidate(deps: RemoteSiteDeps, runningText: string, edited: string, path: string | undefined): Promise<{ ok: true; config: Config; text: string; secrets: string[]; plan: ReturnType<typeof planSiteChange> } | { ok: false; problems: ConfigIssue[] }> {
  const { secrets } = redactSiteText(runningText, deps.current());
  const restored = restoreSiteSecrets(edited, secrets, SITE_LABEL);
  if (!restored.ok) return { ok: false, problems: restored.problems };
  const hide = [...secrets, ...writtenSecrets(restored.text)].sort((a, b) => b.length - a.length);
  const { store } = deps;
  const file = path ?? store.scratchPath();
  let reading: SiteReading;
  try {
    store.writeScratch(file, restored.text);
    reading = await deps.readFile(file);
  } finally {
    if (path === undefined) store.removeScratch(file);
  }
  const named = (issues: readonly ConfigIssue[]) => redactIssues(issues.map((i) => ({ path: i.path.replaceAll(file, SITE_LABEL), message: i.message.replaceAll(file, SITE_LABEL) })), hide);
  if (!reading.config) return { ok: false, problems: named(reading.issues) };
  const plan = planSiteChange(deps.current(), reading.config, deps.addressHolders());
  if (!plan.ok) return { ok: false, problems: named(plan.issues) };
  return { ok: true, config: reading.config, text: restored.text, secrets: hide, plan };
}
