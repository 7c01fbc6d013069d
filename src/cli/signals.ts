// Long-running commands (run, emulator, simulate) stop on the first SIGINT or SIGTERM; `run`
// reloads its site file on SIGHUP (which would otherwise end the process with exit 129).

/** Resolves with the signal's name on the first SIGINT or SIGTERM. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/** Calls `listener` on each SIGHUP until the returned function is called; while listening, SIGHUP never ends the process. */
export function onHangup(listener: () => void): () => void {
  process.on('SIGHUP', listener);
  return () => process.off('SIGHUP', listener);
}
