// An edited site text as the cloud sends it: its placeholders put back from the running text's
// secrets (the same numbering site_get gave), and the one redaction every answer about it passes
// (a secret of the running text goes back as its placeholder, any other as [redacted]).
import type { Config } from '../core/config/config.js';
import { restoreSiteSecrets } from '../core/config/site-placeholders.js';
import { redactSiteText, siteRedaction, type SiteRedaction, type TextRedactor } from '../core/config/site-redaction.js';
import type { ConfigIssue } from '../core/config/site-types.js';

/** How a site text is named in problems. */
export const SITE_LABEL = 'site';

export type RestoredEdit = { ok: true; text: string; redaction: SiteRedaction } | { ok: false; problems: ConfigIssue[]; redaction: SiteRedaction };

/** `running`: the running text and config; `label`: how problems name the edit. */
export function restoreEdit(running: { text: string; config: Config }, edited: string, label: string, also?: TextRedactor): RestoredEdit {
  const { secrets } = redactSiteText(running.text, running.config);
  const restored = restoreSiteSecrets(edited, secrets, label);
  const redaction = siteRedaction({ running: running.config, texts: [running.text, restored.ok ? restored.text : edited], placeholders: secrets, ...(also ? { also } : {}) });
  return restored.ok ? { ok: true, text: restored.text, redaction } : { ok: false, problems: restored.problems, redaction };
}
