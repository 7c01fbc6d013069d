// For fixture processes the tests start with a stdin pipe: exit when that pipe ends, which happens
// when the test worker holding its other end goes (killed before its cleanup ran, too), so no
// fixture outlives the run. A stdin that is no pipe (ignored, a terminal) is left alone.
import { fstatSync } from 'node:fs';

export function exitWhenParentGoes(exit: (code: number) => void = (code) => process.exit(code)): boolean {
  let stat;
  try {
    stat = fstatSync(0);
  } catch {
    return false;
  }
  if (!stat.isFIFO() && !stat.isSocket()) return false;
  process.stdin.on('end', () => exit(70));
  process.stdin.on('error', () => exit(70));
  process.stdin.resume();
  return true;
}
