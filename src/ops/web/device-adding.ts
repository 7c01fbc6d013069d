// The page's "add a device" flow: the integrator picks a bus, a unit, a profile, a name (and the
// device's cloud credential), and the daemon computes the site file's new text from the file it
// runs (core/config/site-add-device.ts), then checks or applies it through the site-file page's
// own Check and Apply. One add at a time: two at once would compute from the same file and the
// second would undo the first.
import type { Config } from '../../core/config/config.js';
import { describeValue } from '../../core/config/issues.js';
import type { DeviceProfile } from '../../core/config/profile-types.js';
import { addDeviceToSite, type NewDevice } from '../../core/config/site-add-device.js';
import { siteRedaction, type TextRedactor } from '../../core/config/site-redaction.js';
import type { Logger } from '../log.js';
import { loadProfiles } from '../profile-library.js';
import type { RemoteReadBus } from '../self/commands.js';
import type { SiteAnswer, SiteFileView } from './site-view.js';
import { identifyUnit } from './unit-identify.js';

export interface ProfileChoice {
  name: string;
  vendor: string;
  model: string;
  /** The library can tell this model by its registers (docs/profiles.md). */
  identifies: boolean;
}

export interface DeviceAddingDeps {
  site: SiteFileView;
  current(): Config;
  log: Logger;
  knownSecrets?: TextRedactor;
  /** The running buses, for identifying a unit found (kept current by reloads). */
  buses?: ReadonlyMap<string, RemoteReadBus>;
  /** The profile library of a config (shipped profiles and gateway.profileDirs). */
  library?(config: Config): readonly DeviceProfile[];
}

function libraryOf(config: Config): readonly DeviceProfile[] {
  const { library } = loadProfiles(config.gateway.profileDirs ?? []);
  return library.names().flatMap((name) => library.get(name) ?? []);
}

/** Appended to the page session's id for the add flow's placeholders (a session id never contains it). */
const ADD_FLOW_KEY = ' add-device';

type Parsed = { ok: true; device: NewDevice } | { ok: false; error: string };

/** The form's fields, each checked for its type (the values' ranges are the core's to judge). */
export function readNewDevice(body: unknown): Parsed {
  const b = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const wrong: string[] = [];
  const text = (key: string, optional = false): string | undefined => {
    const value = b[key];
    if (optional && (value === undefined || value === '')) return undefined;
    if (typeof value !== 'string' || value === '') wrong.push(`${key} must be a non-empty string (got ${describeValue(value)})`);
    return typeof value === 'string' ? value : undefined;
  };
  const number = (key: string, optional = false): number | undefined => {
    const value = b[key];
    if (optional && (value === undefined || value === '' || value === null)) return undefined;
    if (typeof value !== 'number' || !Number.isFinite(value)) wrong.push(`${key} must be a number (got ${describeValue(value)})`);
    return typeof value === 'number' ? value : undefined;
  };
  const name = text('name'), bus = text('bus'), profile = text('profile'), unitId = number('unitId');
  const pollIntervalMs = number('pollIntervalMs', true), accessToken = text('accessToken', true);
  if (wrong.length > 0 || name === undefined || bus === undefined || profile === undefined || unitId === undefined) return { ok: false, error: wrong.join('; ') };
  return { ok: true, device: { name, bus, unitId, profile, ...(pollIntervalMs !== undefined ? { pollIntervalMs } : {}), ...(accessToken !== undefined ? { accessToken } : {}) } };
}

export class DeviceAdding {
  private busy = false;
  private identifying = false;
  private profiles: { config: Config; list: readonly DeviceProfile[] } | undefined;

  constructor(private readonly deps: DeviceAddingDeps) {}

  /** The library's profiles, read again only after a reload changed the config. */
  choices(): ProfileChoice[] {
    return this.library().map((p) => ({ name: p.name, vendor: p.vendor, model: p.model, identifies: p.identification !== undefined }));
  }

  /** Which library profiles a unit's identification registers match; one unit at a time. */
  async identify(body: unknown, signal?: AbortSignal): Promise<SiteAnswer> {
    const redaction = this.redaction([], []);
    const { bus: name, unit } = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const bus = typeof name === 'string' ? this.deps.buses?.get(name) : undefined;
    if (!bus) return { ok: false, status: 400, error: redaction.text(`bus must be one of ${[...(this.deps.buses?.keys() ?? [])].join(', ')} (got ${describeValue(name)})`) };
    if (!Number.isInteger(unit) || (unit as number) < 0 || (unit as number) > 255) return { ok: false, status: 400, error: redaction.text(`unit must be an integer 0..255 (got ${describeValue(unit)})`) };
    if (this.identifying) return { ok: false, status: 409, error: redaction.text('a unit is being identified already') };
    this.identifying = true;
    try {
      return { ok: true, body: redaction.json({ bus: name, ...(await identifyUnit(bus, unit as number, this.library(), signal)) }) };
    } catch (err) {
      this.deps.log.warn({ bus: name, unit, err }, 'page unit identification failed');
      return { ok: false, status: 502, error: redaction.text(`identification of unit ${String(unit)} stopped: ${(err as Error).message}`) };
    } finally {
      this.identifying = false;
    }
  }

  /** Devices get a cloud credential only where the site has a broker to reach. */
  hasCloud(): boolean {
    return Boolean(this.deps.current().gateway.cloud.mqttUrl);
  }

  private library(): readonly DeviceProfile[] {
    const config = this.deps.current();
    if (this.profiles?.config !== config) this.profiles = { config, list: (this.deps.library ?? libraryOf)(config) };
    return this.profiles.list;
  }

  /** `apply` false: the change and Check's verdict; true: the change applied through the site page's Apply. */
  async add(session: string, body: unknown, apply: boolean): Promise<SiteAnswer> {
    const token = (body as { accessToken?: unknown } | null)?.accessToken;
    const redaction = this.redaction([], typeof token === 'string' ? [token] : []);
    const parsed = readNewDevice(body);
    if (!parsed.ok) return { ok: false, status: 400, error: redaction.text(parsed.error) };
    if (this.busy) return { ok: false, status: 409, error: redaction.text('a device is being added already: try again when that is done') };
    this.busy = true;
    try {
      return await this.addOne(session, parsed.device, apply);
    } finally {
      this.busy = false;
    }
  }

  private async addOne(pageSession: string, device: NewDevice, apply: boolean): Promise<SiteAnswer> {
    // The file as the site page shows it, its secrets as placeholders Check and Apply put back,
    // under a key of the add flow's own: showing it again must not renumber the placeholders of a
    // site-file page open in the same session (its text would then restore one device's token
    // into another's place).
    const session = `${pageSession}${ADD_FLOW_KEY}`;
    const shown = this.deps.site.show(session);
    if (!shown.ok) return shown;
    const before = String(shown.body.text);
    const added = addDeviceToSite(before, device, { profiles: new Set(this.library().map((p) => p.name)), cloud: this.hasCloud() });
    const redaction = this.redaction(added.ok ? [added.text] : [before], device.accessToken !== undefined ? [device.accessToken] : []);
    if (!added.ok) {
      const taken = added.problems.some((p) => p.kind === 'taken');
      this.deps.log.info({ device: device.name, bus: device.bus, unitId: device.unitId, problems: added.problems.length }, 'page device add refused');
      return { ok: false, status: taken ? 409 : 400, error: redaction.text(added.problems.map((p) => p.message).join('; ')) };
    }
    const outcome = apply ? await this.deps.site.apply(session, added.text) : await this.deps.site.check(session, added.text);
    if (!outcome.ok) return outcome;
    if (apply) this.deps.log.info({ device: device.name, bus: device.bus, unitId: device.unitId, profile: device.profile, outcome: outcome.body.outcome }, 'page device add applied');
    return { ok: true, body: redaction.json({ ...outcome.body, device: device.name, change: added.change }) };
  }

  /** The running config's secrets, the texts' (the new credential among them) and the process's. */
  private redaction(texts: readonly string[], secrets: readonly string[]) {
    return siteRedaction({ running: this.deps.current(), texts, secrets, ...(this.deps.knownSecrets ? { also: this.deps.knownSecrets } : {}) });
  }
}
