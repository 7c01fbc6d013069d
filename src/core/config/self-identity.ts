// `gateway.cloud.identity`: how fieldgate behaves as a cloud device of its own (report pace and the
// bounds of the commands it answers). The identity's credential keys are validated beside these.

/** What `gateway.cloud.identity` bounds; defaults below. */
export interface SelfIdentitySettings {
  /** Own attributes are reported this often, and on change of the discrete ones. */
  reportIntervalMs: number;
  /** Two own reports are at least this far apart (changes in between are coalesced). */
  minReportGapMs: number;
  commands: SelfCommandLimits;
  /** The remote site commands (docs/remote-config.md). */
  site: SiteCommandSettings;
}

/** `gateway.cloud.identity.site`: bounds of site_get, site_check, site_apply and the generation store. */
export interface SiteCommandSettings {
  /** site_check, site_apply and site_rollback per minute, a token bucket holding a minute's worth. */
  checksPerMinute: number;
  /** Longest confirmWithinS a site_apply may ask for (s). */
  confirmMaxS: number;
  /** Generations the state directory keeps (texts and history); the running one and its predecessor always. */
  historyKept: number;
}

export interface SelfCommandLimits {
  /** Registers one `read` command may fetch (holding, input); Modbus allows 125. */
  readMaxRegisters: number;
  /** Bits one `read` command may fetch (coil, discrete); Modbus allows 2000. */
  readMaxBits: number;
  /** `read` and `poll` commands per minute, a token bucket holding a minute's worth. */
  readsPerMinute: number;
  /** Longest a `log_level` command may keep its level before it reverts. */
  logLevelMaxMs: number;
  /** Commands on the own identity handled at once; more are answered busy. */
  maxPending: number;
}

export const DEFAULT_SELF_IDENTITY: SelfIdentitySettings = {
  reportIntervalMs: 60_000,
  minReportGapMs: 5000,
  commands: { readMaxRegisters: 125, readMaxBits: 2000, readsPerMinute: 30, logLevelMaxMs: 3_600_000, maxPending: 8 },
  site: { checksPerMinute: 12, confirmMaxS: 3600, historyKept: 20 },
};

/** A numeric schema leaf, as schema.ts builds them (passed in so this file does not import schema.ts). */
type NumberLeaf<Leaf> = (doc: string, fallback: number, min: number, max: number) => Leaf;

/** The convict schema of the keys above; schema.ts places it at `gateway.cloud.identity`. */
export function selfIdentitySchema<Leaf>(number: NumberLeaf<Leaf>) {
  const d = DEFAULT_SELF_IDENTITY;
  return {
    reportIntervalMs: number('Own attributes are reported this often (ms), and on change.', d.reportIntervalMs, 5000, 86_400_000),
    minReportGapMs: number('Two own attribute reports are at least this far apart (ms).', d.minReportGapMs, 1000, 600_000),
    commands: {
      readMaxRegisters: number('Registers one remote read may fetch.', d.commands.readMaxRegisters, 1, 125),
      readMaxBits: number('Bits one remote read may fetch.', d.commands.readMaxBits, 1, 2000),
      readsPerMinute: number('Remote reads and polls per minute.', d.commands.readsPerMinute, 1, 6000),
      logLevelMaxMs: number('Longest a temporary log level lasts (ms).', d.commands.logLevelMaxMs, 1000, 86_400_000),
      maxPending: number('Commands on the own identity handled at once; more are answered busy.', d.commands.maxPending, 1, 1000),
    },
    site: {
      checksPerMinute: number('site_check, site_apply and site_rollback commands per minute.', d.site.checksPerMinute, 1, 600),
      confirmMaxS: number('Longest confirmation window a site_apply may ask for (s).', d.site.confirmMaxS, 5, 86_400),
      historyKept: number('Site generations kept in the state directory.', d.site.historyKept, 2, 1000),
    },
  };
}

/** Keys above that take a duration string ("5s", "1h"). */
export const SELF_IDENTITY_DURATION_KEYS = [
  'gateway.cloud.identity.reportIntervalMs', 'gateway.cloud.identity.minReportGapMs', 'gateway.cloud.identity.commands.logLevelMaxMs',
];
