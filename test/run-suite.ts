// `npm test`: the whole suite as two vitest runs at once. The calm files (CALM_FILES in
// vitest.config.ts: serial lines over pty pairs, the bus's timeouts and late replies) at the
// machine's normal priority, at most one per CPU; the busy files beside them under `nice -n 19`,
// so the kernel hands the CPU to a calm file (and its peers) the moment it wakes. Their closing
// lines are added into the one CI reads. Arguments (files, flags) or FIELDGATE_TEST_WORKERS run
// one plain `vitest run` instead, the groups one after the other.
import { spawn, type ChildProcess } from 'node:child_process';
import { checkPeersOnce } from './helpers/peers-setup.js';
import { runGroups, type RunGroup } from './helpers/split-run.js';

const VITEST = ['node_modules/vitest/vitest.mjs', 'run'] as const;

const GROUPS: RunGroup[] = [
  { name: 'calm', command: [process.execPath, ...VITEST, '--project', 'calm'] },
  { name: 'busy', command: ['nice', '-n', '19', process.execPath, ...VITEST, '--project', 'busy'] },
];

function forwardSignals(children: ChildProcess[]): void {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      for (const child of children) child.kill(signal);
    });
  }
}

const args = process.argv.slice(2);
const children: ChildProcess[] = [];
forwardSignals(children);
if (args.length > 0 || process.env['FIELDGATE_TEST_WORKERS'] !== undefined) {
  const child = spawn(process.execPath, [...VITEST, ...args], { stdio: 'inherit', env: { ...process.env, NO_COLOR: '1' } });
  children.push(child);
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else {
  checkPeersOnce(); // once, before both runs (it marks process.env, which they inherit)
  const total = await runGroups(GROUPS, { ...process.env, NO_COLOR: '1' }, { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`) }, children);
  process.exit(total.failed > 0 ? 1 : 0);
}
