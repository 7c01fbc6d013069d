// `fieldgate/workspace-kit`: the daemon's code that the emulator and simulator packages use too,
// so each concept has one definition (one clock, one register table model, one RTU framing, one
// logger factory, one CLI contract, one way to keep a serial line's timing). The daemon runs
// without the packages: only its development commands (emulator, simulate, the embedded demo) load
// them. Once `src/shared.ts` (`fieldgate/shared`): a name that read as the bus share.
export { systemClock, systemWallClock, systemTimers, systemTime, sleep, repeatEvery, type Clock, type WallClock, type MonoMs, type EpochMs, type Timers, type Time } from './core/time.js';
export { createLogger, silentLogger, LOG_LEVELS, type Logger } from './ops/log.js';
export type { LevelWithSilent } from 'pino';
export { TABLES, isBitTable, type Table, type ByteOrder, type WordOrder } from './core/points/types.js';
export type { Parity } from './core/config/site-types.js';
export { crc16, encodeRtuFrame, decodeRtuFrame, type RtuDecodeResult } from './core/modbus/rtu-frame.js';
export { EXIT_CONFIG, EXIT_UNAVAILABLE, EXIT_USAGE, type CliCommand, type CliIo } from './cli/io.js';
export { untilSignal } from './cli/signals.js';
export { loadProfiles, SHIPPED_PROFILE_DIR, type LoadedProfiles } from './ops/profile-library.js';
export type { DeviceProfile, ProfileLibrary } from './core/config/profile-types.js';
export { deviceBlock, profileRefs, type ProfileRef } from './core/config/profile-block.js';
export { useDirectIo } from './field/modbus/serial-direct-io.js';
export { preciseSleep, type Sleep } from './field/modbus/line-silence.js';
export { identificationAt } from './core/config/identification-match.js';
