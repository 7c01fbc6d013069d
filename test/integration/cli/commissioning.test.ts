// read / write / scan against the simulator, over Modbus TCP and over RTU on a socat pty pair.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/ops/log.js';
import { runCli } from '../../helpers/run-cli.js';
import { freePort } from '../../helpers/mosquitto.js';
import { isPseudoTerminal } from '../../../src/cli/pty-check.js';
import { createPtyPair, parseSimMap, startSimulation, type PtyPair, type Simulation } from '../../../packages/simulator/src/index.js';

const MAP = `
units:
  1:
    size: { coil: 50, discrete: 50, holding: 100, input: 100 }
    holding:
      - { address: 0, type: float32, value: 123.456 }
      - { address: 10, value: 215 }
      - { address: 11, value: 216 }
      - { address: 12, value: 217 }
      - { address: 20, type: float32, value: 1.5 }
      - { address: 22, type: float32, value: -2.25 }
    coil:
      - { start: 3, values: [true] }
  7:
    size: { holding: 10 }
`;

const run = (args: string[]) => runCli(args);

describe('commissioning CLI over Modbus TCP', () => {
  let sim: Simulation;
  let bus: string;
  beforeAll(async () => {
    const map = parseSimMap(MAP);
    if (!map.ok) throw new Error(map.problems.join('; '));
    sim = await startSimulation({ map: map.map, logger: silentLogger(), tcp: { host: '127.0.0.1', port: 0 } });
    bus = `127.0.0.1:${sim.tcp?.port}`;
  });
  afterAll(async () => sim.close());

  it('reads a typed value', async () => {
    const r = await run(['read', '--bus', bus, '--unit', '1', '--address', '0', '--type', 'float32']);
    expect(r).toMatchObject({ code: 0, out: '123.456\n' });
  });

  it('shows every interpretation without --type', async () => {
    const r = await run(['read', '--bus', bus, '--unit', '1', '--address', '0', '--count', '2']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('0x42F6');
    expect(r.out).toContain('123.456');
  });

  it('labels every row of the interpretations with its register address, not its offset', async () => {
    const r = await run(['read', '--bus', bus, '--unit', '1', '--address', '10', '--count', '3']);
    expect(r.code).toBe(0);
    const registerRows = r.out.split('\n').filter((line) => /^\s*\d+\s+0x\S+\s+\d/.test(line));
    expect(registerRows.map((line) => line.trim().split(/\s+/).slice(0, 3))).toEqual([['10', '0x00D7', '215'], ['11', '0x00D8', '216'], ['12', '0x00D9', '217']]);
    expect(r.out).not.toMatch(/^\s*0\s+0x/m);
  });

  it('reads --count values of a --type, each at its own address', async () => {
    const words = await run(['read', '--bus', bus, '--unit', '1', '--address', '10', '--type', 'uint16', '--count', '2']);
    expect(words).toMatchObject({ code: 0, out: '10: 215\n11: 216\n' });
    const floats = await run(['read', '--bus', bus, '--unit', '1', '--address', '20', '--type', 'float32', '--count', '2']);
    expect(floats).toMatchObject({ code: 0, out: '20: 1.5\n22: -2.25\n' });
    const json = await run(['read', '--bus', bus, '--unit', '1', '--address', '10', '--type', 'int16', '--count', '3', '--json']);
    expect(JSON.parse(json.out)).toEqual({ values: [{ address: 10, value: 215 }, { address: 11, value: 216 }, { address: 12, value: 217 }], raw: [215, 216, 217] });
    const one = await run(['read', '--bus', bus, '--unit', '1', '--address', '10', '--type', 'uint16']);
    expect(one).toMatchObject({ code: 0, out: '215\n' });
  });

  it('refuses a --count whose values would not fit one read', async () => {
    const r = await run(['read', '--bus', bus, '--unit', '1', '--address', '0', '--type', 'float64', '--count', '32']);
    expect(r.code).toBe(64);
    expect(r.err).toContain('32 values of float64 need 128 registers');
  });

  it('writes with scale, reads back, and refuses an out-of-range value before the bus', async () => {
    const ok = await run(['write', '--bus', bus, '--unit', '1', '--address', '10', '--type', 'int16', '--scale', '0.1', '--value', '42.5']);
    expect(ok).toMatchObject({ code: 0, out: 'wrote 42.5, device holds 42.5\n' });
    expect(sim.simulator.getRegister(1, 'holding', 10)).toBe(425);
    const bad = await run(['write', '--bus', bus, '--unit', '1', '--address', '10', '--type', 'uint16', '--value', '70000']);
    expect(bad.code).toBe(64);
    expect(bad.err).toContain('outside uint16 range 0..65535');
  });

  it('sets and clears one bit of a register, keeping the others', async () => {
    sim.simulator.setRegister(1, 'holding', 12, 0x00f0);
    const set = await run(['write', '--bus', bus, '--unit', '1', '--address', '12', '--type', 'bit', '--bit', '0', '--value', 'true']);
    expect(set.code).toBe(0);
    const clear = await run(['write', '--bus', bus, '--unit', '1', '--address', '12', '--type', 'bit', '--bit', '4', '--value', 'false']);
    expect(clear.code).toBe(0);
    expect(sim.simulator.getRegister(1, 'holding', 12)).toBe(0x00e1);
  });

  it('explains an exception and a timeout', async () => {
    const exc = await run(['read', '--bus', bus, '--unit', '1', '--address', '500']);
    expect(exc.code).toBe(69);
    expect(exc.err).toContain('Illegal data address');
    const silent = await run(['read', '--bus', bus, '--unit', '9', '--address', '0', '--timeout', '200']);
    expect(silent.code).toBe(69);
    expect(silent.err).toContain('the connection is up but the device did not answer: check the unit id');
    expect(silent.err).not.toMatch(/A\/B|baud|parity|dialout/);
  });

  it('answers a refused TCP connection with network advice, not serial advice', async () => {
    const closed = await freePort();
    const r = await run(['read', '--bus', `127.0.0.1:${closed}`, '--unit', '1', '--address', '0']);
    expect(r.code).toBe(69);
    expect(r.err).toBe(`fieldgate read: cannot open 127.0.0.1:${closed}: connect ECONNREFUSED 127.0.0.1:${closed}: nothing accepts connections there: check the IP address and port (Modbus TCP is usually 502) and that the device is on\n`);
  });

  it('scans unit ids', async () => {
    const r = await run(['scan', '--bus', bus, '--units', '1-10', '--timeout', '150']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^unit 1: answered in \d+ ms\nunit 7: answered in \d+ ms\n$/);
    expect(r.err).toContain('scanning');
  });
});

/** A simulated 19200 8E1 line on a socat pty for the describe block; `pty.a` is the master's end. */
function rtuLine(options: { echo: boolean }): { pty: () => PtyPair } {
  let sim: Simulation;
  let pty: PtyPair;
  beforeAll(async () => {
    const map = parseSimMap(MAP);
    if (!map.ok) throw new Error(map.problems.join('; '));
    pty = await createPtyPair();
    sim = await startSimulation({ map: map.map, logger: silentLogger(), rtu: { path: pty.b }, line: { baud: 19200, parity: 'even', dataBits: 8, stopBits: 1 }, echo: options.echo });
  });
  afterAll(async () => {
    await sim.close();
    await pty.close();
  });
  return { pty: () => pty };
}

describe('commissioning CLI over RTU (socat pty pair)', () => {
  const line = rtuLine({ echo: false });

  it('reads a coil and finds the units with --bauds', async () => {
    const coil = await run(['read', '--bus', line.pty().a, '--baud', '19200', '--unit', '1', '--table', 'coil', '--address', '3', '--type', 'bool']);
    expect(coil).toMatchObject({ code: 0, out: 'true\n' });
    expect(coil.err).toMatch(/^unit 1 answered in \d+ ms \(timeout \d+ ms\)$/m);
    const scan = await run(['scan', '--bus', line.pty().a, '--bauds', '19200', '--units', '1-8', '--timeout', '150']);
    expect(scan.out).toMatch(/^unit 1 at 19200 baud: answered in \d+ ms\nunit 7 at 19200 baud: answered in \d+ ms\n$/);
  });

  it('says that a pty cannot tell baud rates apart, and lists the units without one', async () => {
    const scan = await run(['scan', '--bus', line.pty().a, '--bauds', 'common', '--units', '1-8', '--timeout', '150']);
    expect(scan.code).toBe(0);
    expect(scan.err).toContain(`fieldgate scan: ${line.pty().a} is a pseudo-terminal (pty): it has no line speed, so every baud rate reaches the unit and --bauds cannot tell them apart`);
    expect(scan.out).toMatch(/^unit 1: answered in \d+ ms\nunit 7: answered in \d+ ms\n$/);
    const json = await run(['scan', '--bus', line.pty().a, '--bauds', '9600,19200', '--units', '1', '--timeout', '150', '--json']);
    expect(JSON.parse(json.out)).toEqual([{ unit: 1, answer: 'reply', detail: 'answered', answerMs: expect.any(Number) as number }]);
  });

  it('tells a pty from other paths', () => {
    expect(isPseudoTerminal(line.pty().a)).toBe(true);
    expect(isPseudoTerminal(line.pty().b)).toBe(true);
    expect(isPseudoTerminal('/dev/null')).toBe(false);
    expect(isPseudoTerminal('/etc/hostname')).toBe(false);
    expect(isPseudoTerminal('/nonexistent/ttyUSB0')).toBe(false);
  });

  it('gives serial advice for a unit that does not answer on the line', async () => {
    const silent = await run(['read', '--bus', line.pty().a, '--baud', '19200', '--unit', '9', '--address', '0', '--timeout', '200']);
    expect(silent.code).toBe(69);
    expect(silent.err).toContain('check the unit id, baud rate and parity, and that the RS-485 A/B wires are not swapped');
  });
});

describe('commissioning CLI on an echoing RS-485 line (simulator --echo)', () => {
  const line = rtuLine({ echo: true });

  it('read says the line echoes (and how to fix it); with --echo it reads', async () => {
    const plain = await run(['read', '--bus', line.pty().a, '--baud', '19200', '--unit', '1', '--table', 'coil', '--address', '3', '--type', 'bool']);
    expect(plain.code).not.toBe(0);
    expect(plain.err).toContain('the line echoes requests: set echo: true on this bus (here: pass --echo)');
    const echoed = await run(['read', '--bus', line.pty().a, '--baud', '19200', '--unit', '1', '--table', 'coil', '--address', '3', '--type', 'bool', '--echo']);
    expect(echoed).toMatchObject({ code: 0, out: 'true\n' });
  });

  it('scan tries both settings: finds the units with the echo stripped and says so', async () => {
    const scan = await run(['scan', '--bus', line.pty().a, '--bauds', '19200', '--units', '1-8', '--timeout', '150']);
    expect(scan.out).toMatch(/^unit 1 at 19200 baud \(echo: true\): answered in \d+ ms\nunit 7 at 19200 baud \(echo: true\): answered in \d+ ms\n$/);
    expect(scan.err).toContain('the line echoes requests: set echo: true on this bus');
  });
});
