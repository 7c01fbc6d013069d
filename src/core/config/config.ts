// A whole loaded config: the settings and the site, and the site compiled. Its own file so that
// site-types.ts (shapes) and compile.ts (which reads those shapes) do not import each other.
import type { CompiledSite } from './compile.js';
import type { GatewaySettings, ProfileOverride, SiteConfig } from './site-types.js';

/** Everything one site file configures; deeply frozen by ops/site-file.ts. */
export interface Config {
  gateway: GatewaySettings;
  site: SiteConfig;
  /** `site` compiled once (core/config/compile.ts): codecs and starting read plans. */
  compiled: CompiledSite;
  /** Site profiles that replaced a shipped profile of the same name (logged by the commands that load). */
  profileOverrides?: ProfileOverride[];
}
