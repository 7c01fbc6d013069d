// `fieldgate run --config SITE`: the daemon. Stops cleanly on SIGINT/SIGTERM (ordered drain);
// reloads the site file on SIGHUP (`systemctl reload`, `fieldgate reload`): see docs/site-file.md.
import { parseArgs } from 'node:util';
import { startGateway } from '../main.js';
import { configSecrets } from '../core/config/secret-values.js';
import { createLogger, parseComponentLevels } from '../ops/log.js';
import { SecretValues } from '../core/redact.js';
import type { GatewayHandle } from '../ops/gateway-handle.js';
import { publishHealthAddress, runtimeDirOf } from '../ops/health-address.js';
import type { Logger } from '../core/logger.js';
import { FIELDGATE_VERSION } from '../core/version.js';
import { EXIT_CONFIG, EXIT_USAGE, type CliCommand, wantsHelp } from './io.js';
import { onHangup, untilSignal } from './signals.js';
import { logAddressNotes, logRenamedPoints, readSiteForRun, reportIssues } from './site-loading.js';
import { startingSite } from './site-generation-start.js';
import { EXIT_STATE_LOCKED, StateDirLock } from '../ops/state-lock.js';

const USAGE = 'usage: fieldgate run --config SITE.yaml   (or FIELDGATE_CONFIG=SITE.yaml fieldgate run)\n';

/** The health endpoint's port for `fieldgate status` (ops/health-address.ts); a failure costs only that. */
function publishHealth(port: number | undefined, env: NodeJS.ProcessEnv, host: string, logger: Logger): () => void {
  const dir = runtimeDirOf(env);
  if (port === undefined || dir === undefined) return () => {};
  try {
    return publishHealthAddress(dir, { pid: process.pid, host, port, version: FIELDGATE_VERSION });
  } catch (err) {
    logger.warn({ err, runtimeDir: dir }, 'health port not published; fieldgate status needs --port');
    return () => {};
  }
}

export const runRun: CliCommand = async (args, io) => {
  if (wantsHelp(args)) {
    io.stdout.write(USAGE);
    return 0;
  }
  // From the first moment: a SIGHUP while starting is remembered and applied once running.
  let gateway: GatewayHandle | undefined;
  let hangupWhileStarting = false;
  let releaseLock = () => {};
  let file: string | undefined;
  const reload = () => {
    if (!gateway || !file) return void (hangupWhileStarting = true);
    // The seed file taken in as a new generation (read and checked in a worker thread: polls and links keep their timing meanwhile).
    void gateway.reloadSite();
  };
  const stopListening = onHangup(reload);
  try {
    try {
      const { values } = parseArgs({ args, options: { config: { type: 'string', short: 'c' } }, strict: true });
      file = values.config ?? io.env.FIELDGATE_CONFIG;
    } catch (err) {
      io.stderr.write(`fieldgate run: ${(err as Error).message}\n${USAGE}`);
      return EXIT_USAGE;
    }
    if (!file) {
      io.stderr.write(`fieldgate run: no site file given\n${USAGE}`);
      return EXIT_USAGE;
    }
    const read = readSiteForRun(file, io.env);
    if (!read.config) {
      reportIssues(read.issues, file, io, 'run', 'nothing started');
      return EXIT_CONFIG;
    }
    const seedConfig = read.config;
    const secrets = new SecretValues();
    secrets.add(...configSecrets(seedConfig));
    const logger = createLogger({ level: seedConfig.gateway.logLevel, destination: io.stdout, secrets });
    // Before anything touches the state: a second daemon would share the outbox and kick the first's links off the broker.
    const { stateDir } = seedConfig.gateway;
    const lock = new StateDirLock(stateDir, logger);
    const first = lock.check();
    if (first.state === 'refused') {
      const holder = first.holderPid === undefined ? 'another process' : `fieldgate PID ${first.holderPid}`;
      io.stderr.write(`fieldgate run: the state directory ${stateDir} is in use by ${holder} (lock ${lock.lockFile}); stop it first or give this site another stateDir\n`);
      logger.fatal({ stateDir, lockFile: lock.lockFile, holderPid: first.holderPid ?? null }, 'state directory in use by another fieldgate');
      return EXIT_STATE_LOCKED;
    }
    // Pending (a directory that cannot be made yet) or a lock file that cannot be written: taken
    // or written later by the periodic check; a directory taken by another daemon meanwhile stops this one.
    const lockLost = watchLock(lock, seedConfig.gateway.cloud.outbox.storageRetryMs ?? 1000, logger);
    releaseLock = () => {
      lockLost.stop();
      lock.release();
    };
    // Under the lock: the seed, or the state directory's last confirmed generation.
    const loaded = startingSite(file, { config: seedConfig, ...(read.sha256 ? { sha256: read.sha256 } : {}), ...(read.addresses ? { addresses: read.addresses } : {}) }, io.env, logger);
    const { config } = loaded;
    secrets.add(...configSecrets(config));
    logAddressNotes(loaded.addresses, logger);
    // Checked with the site file above: every entry is valid here.
    const { levels } = parseComponentLevels(io.env.FIELDGATE_LOG_LEVELS);
    for (const { name, file: used, shipped } of config.profileOverrides ?? []) logger.info({ profile: name, file: used, shipped }, 'site profile replaces the shipped profile');
    logRenamedPoints(config, logger);
    try {
      gateway = await startGateway(config, {
        logger, env: io.env, componentLevels: levels, secrets, siteFile: file,
        ...(loaded.sha256 ? { configSha256: loaded.sha256 } : {}), siteGenerations: loaded.generations ?? null,
      });
    } catch (err) {
      // The state directory and CA file were checked above; what fails here is transient: systemd restarts us with backoff.
      logger.fatal({ err }, 'gateway failed to start');
      return 1;
    }
    if (hangupWhileStarting) reload();
    const unpublish = publishHealth(gateway.healthPort, io.env, config.gateway.health.host, logger);
    const ended = await Promise.race([untilSignal().then((signal) => ({ signal })), lockLost.refused.then((holderPid) => ({ holderPid }))]);
    if ('signal' in ended) logger.info({ signal: ended.signal }, 'signal received');
    else logger.fatal({ stateDir, lockFile: lock.lockFile, holderPid: ended.holderPid ?? null }, 'state directory taken by another fieldgate: stopping');
    unpublish();
    try {
      await gateway.stop();
    } catch (err) {
      logger.fatal({ err }, 'gateway stop failed');
      return 1;
    }
    return 'signal' in ended ? 0 : EXIT_STATE_LOCKED;
  } finally {
    stopListening();
    releaseLock();
  }
};

/** Checks the lock every `intervalMs`; `refused` resolves when another process holds the directory. */
function watchLock(lock: StateDirLock, intervalMs: number, logger: Logger): { refused: Promise<number | undefined>; stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  const refused = new Promise<number | undefined>((resolve) => {
    timer = setInterval(() => {
      try {
        const state = lock.check();
        if (state.state !== 'refused') return;
        clearInterval(timer);
        resolve(state.holderPid);
      } catch (err) {
        logger.error({ err, stateDir: lock.stateDir }, 'state directory lock check failed');
      }
    }, intervalMs);
    timer.unref();
  });
  return { refused, stop: () => clearInterval(timer) };
}
