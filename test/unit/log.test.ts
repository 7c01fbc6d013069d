import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { componentLogger, createLogger, parseComponentLevels } from '../../src/ops/log.js';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({ write(chunk: Buffer, _enc, cb) { lines.push(...chunk.toString().trim().split('\n')); cb(); } });
  return { lines, destination };
}

describe('parseComponentLevels', () => {
  it.each([
    [undefined, [], []],
    ['bus=debug', [['bus', 'debug']], []],
    [' bus = trace , cloud=warn ', [['bus', 'trace'], ['cloud', 'warn']], []],
    ['bus=loud,cloud', [], ['bus=loud', 'cloud']],
  ])('%s', (text, levels, invalid) => {
    const parsed = parseComponentLevels(text);
    expect([...parsed.levels.entries()]).toEqual(levels);
    expect(parsed.invalid).toEqual(invalid);
  });
});

describe('logger', () => {
  it('redacts secrets at any depth', () => {
    const { lines, destination } = capture();
    const log = createLogger({ level: 'info', destination });
    log.info({ access_token: 'tok-1', cloud: { projectKey: 'pk-2', nested: { secretKey: 'sk-3' } }, password: 'pw' }, 'connecting');
    const text = lines.join('\n');
    for (const secret of ['tok-1', 'pk-2', 'sk-3', '"pw"']) expect(text).not.toContain(secret);
    expect(text).toContain('[redacted]');
    expect(JSON.parse(lines[0])).toMatchObject({ msg: 'connecting', service: 'fieldgate' });
  });

  it('gives a component its own level', () => {
    const { lines, destination } = capture();
    const root = createLogger({ level: 'info', destination });
    const levels = parseComponentLevels('bus=debug').levels;
    componentLogger(root, 'bus', levels).debug('bus detail');
    componentLogger(root, 'cloud', levels).debug('cloud detail');
    expect(lines.map((l) => JSON.parse(l) as { msg: string; component: string })).toEqual([expect.objectContaining({ msg: 'bus detail', component: 'bus' })]);
  });
});
