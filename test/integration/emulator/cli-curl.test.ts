// `fieldgate emulator` as a child process, driven with real curl; stops on SIGTERM.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connectAsync, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP, PROJECT_KEY, waitFor } from './helpers.js';
import { TSX_FROM_SOURCE } from '../../helpers/child.js';

const run = promisify(execFile);
/** The app-side doors on free ports too (their defaults are fixed). */
const APP_PORTS = ['--app-mqtt-port', '0', '--app-ws-port', '0', '--app-wss-port', '0'];
const CLI = new URL('./fixtures/run-emulator-cli.ts', import.meta.url).pathname;

function startCli(args: string[]): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  // stdin a pipe: the fixture exits when it ends, should this worker die before afterAll.
  const child = spawn(process.execPath, [...TSX_FROM_SOURCE, CLI, ...args], { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => { out += c.toString(); });
  child.stderr?.on('data', (c: Buffer) => { out += c.toString(); });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

/** curl with a JSON body; returns the status and parsed body (and raw headers). */
async function curl(args: string[]): Promise<{ status: number; headers: string; body: Record<string, any> }> {
  const { stdout } = await run('curl', ['-sS', '-i', '-H', 'Content-Type: application/json', ...args]);
  const [head, ...rest] = stdout.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1]);
  return { status, headers: head, body: JSON.parse(rest.join('\r\n\r\n')) as Record<string, any> };
}

describe('fieldgate emulator CLI with curl', () => {
  let cli: ReturnType<typeof startCli>;
  let base = '';

  beforeAll(async () => {
    cli = startCli(['--http-port', '0', '--mqtt-port', '0', '--tcp-port', '0', ...APP_PORTS, '--rate-limit', '50']);
    await waitFor(() => /http:\/\/127\.0\.0\.1:(\d+)/.test(cli.output()), 20_000, 'the emulator to print its ports');
    base = `http://127.0.0.1:${/http:\/\/127\.0\.0\.1:(\d+)/.exec(cli.output())![1]}`;
  });
  afterAll(async () => {
    if (cli.child.exitCode === null) {
      cli.child.kill('SIGKILL');
      await cli.exited;
    }
  });

  it('prints the ports and the seed summary', () => {
    expect(cli.output()).toMatch(/mqtt {2}mqtt:\/\/127\.0\.0\.1:\d+/);
    expect(cli.output()).toMatch(/tcp {3}127\.0\.0\.1:\d+/);
    expect(cli.output()).toContain('5 devices');
    expect(cli.output()).toContain('50 requests / 60 s');
    expect(cli.output()).toMatch(/app {3}wss:\/\/127\.0\.0\.1:\d+\/mqtt {2}ws:\/\/127\.0\.0\.1:\d+\/mqtt {2}mqtt:\/\/127\.0\.0\.1:\d+/);
    // The sample seed fixes the app-side login, so the docs' sample command lines work as printed.
    expect(cli.output()).toContain('ProjectViewKey demo-view-key  ProjectViewSecret demo-view-secret');
    expect(cli.output()).toMatch(/status http:\/\/127\.0\.0\.1:\d+\/emulator\/v1\/status/);
  });

  it('serves interface A to curl, rate headers included', async () => {
    const tok = await curl(['-X', 'POST', `${base}/api/v1/access_token`, '-d', JSON.stringify(APP)]);
    expect(tok.status).toBe(200);
    expect(tok.headers).toMatch(/X-RateLimit-Limit: 50/i);
    const auth = `Authorization: Bearer ${tok.body.info.access_token}`;
    const devices = await curl(['-H', auth, `${base}/api/v1/devices?page_records=2`]);
    expect(devices.body.info).toMatchObject({ total: 5, page_total: 3 });
    const cert = await curl(['-H', auth, `${base}/api/v1/device/dev-meter-3/certificate`]);
    expect(cert.body.info).toMatchObject({ access_token: 'demo-meter-3-token', project_key: PROJECT_KEY });
    const bad = await curl(['-X', 'POST', '-H', auth, `${base}/api/v1/device`, '-d', '{oops']);
    expect(bad.status).toBe(404);
    expect(bad.body).toEqual({ result: false, message: 'Invalid JSON message', errcode: 400 });
    const unknown = await curl([`${base}/api/v1/unknown`]);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: 'Request invalid' });
  });

  it('serves interface B and the certificate endpoint to curl', async () => {
    const key = `Project-Key: ${PROJECT_KEY}`;
    const push = await curl(['-X', 'PUT', '-H', key, `${base}/app/device/v1/demo-meter-2-token/attributes`, '-d', '{"mode":"eco"}']);
    expect(push.body).toMatchObject({ result: 1 });
    const read = await curl(['-H', key, `${base}/app/device/v1/demo-meter-2-token/attributes?keys=mode`]);
    expect(read.body).toEqual({ result: 1, attributes: { mode: 'eco' } });
    const cert = await curl(['-X', 'POST', '-H', key, `${base}/device/v1/certificate`, '-d', '{"device_key":"meter-1"}']);
    expect(cert.body).toMatchObject({ result: 1, message: 'success', device: { id: 'dev-meter-1', access_token: 'demo-meter-1-token' } });
  });

  it('stops cleanly on SIGTERM', async () => {
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
  });
});

describe('fieldgate emulator CLI errors', () => {
  let dir = '';
  beforeAll(() => { dir = mkdtempSync(join(tmpdir(), 'fg-emu-')); });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('exits 78 listing every seed problem', async () => {
    const seed = join(dir, 'bad.yaml');
    writeFileSync(seed, 'project: { id: p }\ndevices:\n  - { id: d, name: D, type: nope, device_key: k }\n');
    const cli = startCli(['--seed', seed, '--http-port', '0', '--mqtt-port', '0', '--tcp-port', '0', ...APP_PORTS]);
    expect(await cli.exited).toBe(78);
    expect(cli.output()).toContain('project.name: is required');
    expect(cli.output()).toContain('devices[0].type: unknown device type "nope"');
  });

  it('app side: a wss client trusts the printed CA of the generated pair, mosquitto_sub logs in with the printed key', async () => {
    const tlsDir = join(dir, 'app-tls');
    const cli = startCli(['--http-port', '0', '--mqtt-port', '0', '--tcp-port', '0', ...APP_PORTS, '--app-tls-dir', tlsDir]);
    try {
      await waitFor(() => /trust CA \S+/.test(cli.output()), 30_000, 'the app-side lines');
      const out = cli.output();
      const [key, secret] = [/ProjectViewKey (\S+)/.exec(out)![1]!, /ProjectViewSecret (\S+)/.exec(out)![1]!];
      const wss = Number(/wss:\/\/127\.0\.0\.1:(\d+)/.exec(out)![1]);
      const appTcp = Number(/ {2}mqtt:\/\/127\.0\.0\.1:(\d+)\n {8}ProjectViewKey/.exec(out)![1]);
      const http = /http:\/\/127\.0\.0\.1:(\d+)/.exec(out)![1];
      expect(/trust CA (\S+)/.exec(out)![1]).toBe(join(tlsDir, 'ca.crt'));
      const app = await connectAsync(`wss://127.0.0.1:${wss}/mqtt`, {
        username: key, password: secret, protocolVersion: 4, reconnectPeriod: 0, ca: readFileSync(join(tlsDir, 'ca.crt')), rejectUnauthorized: true,
      });
      await app.subscribeAsync(`${key}/+/attributes`, { qos: 0 });
      const sub = spawn('mosquitto_sub', ['-h', '127.0.0.1', '-p', String(appTcp), '-u', key, '-P', secret, '-t', `${key}/+/attributes`, '-C', '1'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let subOut = '';
      sub.stdout.on('data', (c: Buffer) => { subOut += c.toString(); });
      const subDone = new Promise((resolve) => sub.once('exit', resolve));
      const seen = new Promise<string>((resolve) => app.once('message', (_t, p) => resolve(p.toString())));
      // Resent until mosquitto_sub has subscribed and taken one (QoS 0 is not kept for late subscribers).
      const timer = setInterval(() => {
        void curl(['-X', 'PUT', `http://127.0.0.1:${http}/app/device/v1/demo-meter-1-token/attributes`, '-H', `Project-Key: ${PROJECT_KEY}`, '-d', '{"note":"hi"}']);
      }, 200);
      try {
        expect(JSON.parse(await seen)).toMatchObject({ attributes: { note: 'hi' }, device: { id: 'dev-meter-1' }, source: 'cloud' });
        expect(await subDone).toBe(0);
      } finally {
        clearInterval(timer);
      }
      expect(JSON.parse(subOut)).toMatchObject({ attributes: { note: 'hi' }, source: 'cloud' });
      await app.endAsync(true);
    } finally {
      cli.child.kill('SIGTERM');
      await cli.exited;
    }
  });

  it('exits 64 on bad arguments', async () => {
    const cli = startCli(['--http-port', 'eighty']);
    expect(await cli.exited).toBe(64);
    expect(cli.output()).toContain('--http-port must be a port number');
  });

  it.each([
    ['1001', '--json-max-depth'], ['abc', '--json-max-bytes'], ['both', '--gateway-push-shape'],
    ['0', '--app-max-sessions'], ['-1', '--app-slow-subscriber-s'], ['/x.crt', '--app-tls-cert'],
    ['0', '--mqtt-max-packet-bytes'], ['1048576', '--mqtt-max-packet-bytes'],
  ])('exits 64 on a bad value %s for %s', async (value, flag) => {
    const cli = startCli([flag, value, '--http-port', '0', '--mqtt-port', '0', '--tcp-port', '0', ...APP_PORTS]);
    expect(await cli.exited).toBe(64);
    expect(cli.output()).toContain(flag);
  });

  it('applies --gateway-push-shape to the sample seed\'s gateway', async () => {
    const cli = startCli(['--http-port', '0', '--mqtt-port', '0', '--tcp-port', '0', ...APP_PORTS, '--gateway-push-shape', 'device']);
    let gateway: MqttClient | undefined;
    try {
      await waitFor(() => /mqtt:\/\/127\.0\.0\.1:(\d+)/.test(cli.output()), 20_000, 'the emulator to print its ports');
      const http = `http://127.0.0.1:${/http:\/\/127\.0\.0\.1:(\d+)/.exec(cli.output())![1]}`;
      const mqttUrl = `mqtt://127.0.0.1:${/mqtt:\/\/127\.0\.0\.1:(\d+)/.exec(cli.output())![1]}`;
      gateway = await connectAsync(mqttUrl, { username: 'demo-gateway-token', password: PROJECT_KEY, protocolVersion: 4, reconnectPeriod: 0 });
      const pushes: string[] = [];
      gateway.on('message', (topic, payload) => pushes.push(`${topic} ${payload.toString()}`));
      await gateway.subscribeAsync('gateway/attributes/push', { qos: 1 });
      const url = `${http}/app/device/v1/demo-meter-4-token/attributes`;
      expect((await curl(['-X', 'POST', '-H', `Project-Key: ${PROJECT_KEY}`, '-d', '{"relay":true}', url])).body).toMatchObject({ result: 1 });
      await waitFor(() => pushes.length === 1, 10_000, 'the push to the gateway');
      expect(pushes).toEqual(['gateway/attributes/push {"device":"4","attributes":{"relay":true}}']);
    } finally {
      await gateway?.endAsync(true);
      cli.child.kill('SIGTERM');
      await cli.exited;
    }
  });

  it('applies --json-max-depth and --json-max-bytes', async () => {
    const cli = startCli(['--http-port', '0', '--mqtt-port', '0', '--tcp-port', '0', ...APP_PORTS, '--json-max-depth', '3', '--json-max-bytes', '200']);
    try {
      await waitFor(() => /http:\/\/127\.0\.0\.1:(\d+)/.test(cli.output()), 20_000, 'the emulator to print its ports');
      const url = `http://127.0.0.1:${/http:\/\/127\.0\.0\.1:(\d+)/.exec(cli.output())![1]}/app/device/v1/demo-meter-1-token/attributes`;
      const put = (body: string) => curl(['-X', 'PUT', '-H', `Project-Key: ${PROJECT_KEY}`, '-d', body, url]);
      expect((await put('{"a":{"b":{"c":1}}}')).body).toMatchObject({ result: 1 });
      expect((await put('{"a":{"b":{"c":[1]}}}')).body).toEqual({
        result: 0, errcode: 400, message: 'Invalid parameters: (body) JSON nested deeper than 3 levels',
        errors: [{ field: '(body)', message: 'JSON nested deeper than 3 levels' }],
      });
      expect((await put(JSON.stringify({ a: 'z'.repeat(200) }))).body).toMatchObject({ result: 0, errcode: 413 });
    } finally {
      cli.child.kill('SIGTERM');
      await cli.exited;
    }
  });
});
