// Prints the packages (one path per line, relative to node_modules) that the named packages need
// at run time: themselves and their dependencies and installed optional dependencies, followed
// through package.json in npm's flat (hoisted) layout, nested node_modules included.
//   node scripts/package-closure.mjs NODE_MODULES NAME...
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const [root, ...names] = process.argv.slice(2);
if (!root || names.length === 0) {
  process.stderr.write('usage: package-closure.mjs NODE_MODULES NAME...\n');
  process.exit(64);
}

/** The package directory that holds `dir` in its node_modules ('' for the top level). */
function parent(dir) {
  const at = dir.lastIndexOf('/node_modules/');
  return at < 0 ? '' : dir.slice(0, at);
}

/** The installed directory of `name` as Node resolves it from package directory `from` (relative to root). */
function resolve(name, from) {
  for (let dir = from; ; dir = parent(dir)) {
    const candidate = dir ? `${dir}/node_modules/${name}` : name;
    if (existsSync(join(root, candidate, 'package.json'))) return candidate;
    if (!dir) return undefined;
  }
}

const found = new Set();
const pending = names.map((name) => ({ name, from: '', optional: false }));
while (pending.length > 0) {
  const { name, from, optional } = pending.pop();
  const path = resolve(name, from);
  if (path === undefined) {
    if (optional) continue; // another platform's package: npm did not install it
    process.stderr.write(`package-closure: ${name} (needed by ${from || 'the app'}) is not installed in ${root}\n`);
    process.exit(1);
  }
  if (found.has(path)) continue;
  found.add(path);
  const manifest = JSON.parse(readFileSync(join(root, path, 'package.json'), 'utf8'));
  for (const dep of Object.keys(manifest.dependencies ?? {})) pending.push({ name: dep, from: path, optional: false });
  for (const dep of Object.keys(manifest.optionalDependencies ?? {})) pending.push({ name: dep, from: path, optional: true });
}
// A package nested in another one's node_modules is copied with it.
const nestedIn = (path) => [...found].some((other) => path.startsWith(`${other}/node_modules/`));
process.stdout.write([...found].filter((path) => !nestedIn(path)).sort().join('\n') + '\n');
