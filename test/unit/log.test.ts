import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { componentLogger, createLogger, parseComponentLevels } from '../../src/ops/log.js';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({ write(chunk: Buffer, _enc, cb) { lines.push(...chunk.toString().trim().split('\n')); cb(); } });
  return { lines, destination };
}

describe('parseComponentLevels', () => {
  const components = '(components: bus, poller, reporter, commands, cloud, health, reload, web)';
  it.each([
    [undefined, [], []],
    ['', [], []],
    ['bus=debug', [['bus', 'debug']], []],
    [' bus = trace , cloud=warn ', [['bus', 'trace'], ['cloud', 'warn']], []],
    ['bus=loud,cloud', [], ['"bus=loud": unknown level "loud" (levels: fatal, error, warn, info, debug, trace, silent)', `"cloud": want component=level, e.g. bus=debug ${components}`]],
    ['link=warn', [], [`"link=warn": unknown component "link" ${components}`]],
    ['bus=debug,link=warn', [['bus', 'debug']], [`"link=warn": unknown component "link" ${components}`]],
    ['=warn,bus=', [], [`"=warn": want component=level, e.g. bus=debug ${components}`, `"bus=": want component=level, e.g. bus=debug ${components}`]],
    ['bus=debug,bus=warn', [['bus', 'debug']], ['"bus=warn": bus is given a level twice']],
    ['Bus=debug', [], [`"Bus=debug": unknown component "Bus" ${components}`]],
    ['__proto__=debug,constructor=warn', [], [`"__proto__=debug": unknown component "__proto__" ${components}`, `"constructor=warn": unknown component "constructor" ${components}`]],
    [`${'x'.repeat(100)}=debug`, [], [`"${'x'.repeat(40)}"... (106 characters): unknown component "${'x'.repeat(40)}"... (100 characters) ${components}`]],
  ])('%s', (text, levels, messages) => {
    const parsed = parseComponentLevels(text);
    expect([...parsed.levels.entries()]).toEqual(levels);
    expect(parsed.issues.map((i) => i.message)).toEqual(messages);
    for (const issue of parsed.issues) expect(issue.path).toBe('FIELDGATE_LOG_LEVELS');
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
