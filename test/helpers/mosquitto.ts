// A real mosquitto broker for integration tests: 127.0.0.1 on a free port, anonymous, no
// persistence, logging to stdout. Can be stopped and started again on the same port.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireProgram } from './peers.js';
import { endGroup, signalGroup } from './process-groups.js';

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export interface MosquittoOptions {
  /** username -> password; when given, anonymous clients and unknown users are refused (CONNACK 5). */
  users?: Record<string, string>;
  /**
   * Keep sessions and queued QoS 1 messages across a restart (off by default). Needed when a test
   * checks delivery to a subscriber through a broker restart: without it the broker loses what it
   * already PUBACKed but had not yet passed on.
   */
  persistence?: boolean;
  /** Serve MQTT over TLS with this certificate (url becomes mqtts://). */
  tls?: { certFile: string; keyFile: string };
}

export class Mosquitto {
  private child: ChildProcess | undefined;
  private readonly dir: string;
  private readonly configPath: string;
  private readonly tls: boolean;
  /** Broker output, for failure diagnosis. */
  output = '';

  private constructor(readonly port: number, options: MosquittoOptions) {
    this.dir = mkdtempSync(join(tmpdir(), 'mosquitto-'));
    chmodSync(this.dir, 0o755);
    this.configPath = join(this.dir, 'mosquitto.conf');
    const auth = ['allow_anonymous true'];
    if (options.users) {
      const passwordFile = join(this.dir, 'passwd');
      writeFileSync(passwordFile, '');
      for (const [user, password] of Object.entries(options.users)) {
        execFileSync('mosquitto_passwd', ['-b', passwordFile, user, password]);
      }
      chmodSync(passwordFile, 0o644);
      auth.splice(0, 1, 'allow_anonymous false', `password_file ${passwordFile}`);
    }
    this.tls = options.tls !== undefined;
    const tls = options.tls ? [`certfile ${options.tls.certFile}`, `keyfile ${options.tls.keyFile}`] : [];
    writeFileSync(this.configPath, [
      `listener ${port} 127.0.0.1`,
      'set_tcp_nodelay true',
      ...tls,
      ...auth,
      'log_dest stdout',
      'log_type error',
      'log_type warning',
      'log_type notice',
      ...this.persistenceLines(options.persistence === true),
      '',
    ].join('\n'));
    chmodSync(this.configPath, 0o644);
  }

  private persistenceLines(enabled: boolean): string[] {
    if (!enabled) return ['persistence false'];
    const data = join(this.dir, 'data');
    mkdirSync(data, { mode: 0o777 });
    chmodSync(data, 0o777);
    return ['persistence true', `persistence_location ${data}/`, 'max_queued_messages 0', 'autosave_interval 0'];
  }

  static async start(options: MosquittoOptions = {}): Promise<Mosquitto> {
    // Without the broker every wait below would run to its deadline: fail now, naming the package.
    requireProgram('mosquitto');
    if (options.users) requireProgram('mosquitto_passwd');
    const broker = new Mosquitto(await freePort(), options);
    await broker.startProcess();
    return broker;
  }

  get url(): string {
    return `${this.tls ? 'mqtts' : 'mqtt'}://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /** Start again on the same port (after stop()). */
  async restart(): Promise<void> {
    if (this.child) await this.stop();
    await this.startProcess();
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    await endGroup(child, 5000);
    await waitFor(async () => !(await canConnect(this.port)), 10_000, `port ${this.port} to close`);
  }

  /** Stop and remove the config directory. */
  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async startProcess(): Promise<void> {
    // Right after a stop the port may still be held for a moment: try a few times.
    for (let tries = 1; ; tries += 1) {
      try {
        await this.spawnOnce();
        return;
      } catch (err) {
        this.child = undefined;
        if (tries >= 5) throw err;
        await new Promise((r) => setTimeout(r, 300 * tries));
      }
    }
  }

  private async spawnOnce(): Promise<void> {
    const child = spawn('mosquitto', ['-c', this.configPath], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    this.child = child;
    const collect = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString()).slice(-20_000);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    let exited = false;
    child.once('exit', () => {
      exited = true;
    });
    try {
      await waitFor(async () => {
        if (exited) throw new Error(`mosquitto exited on start:\n${this.output}`);
        return canConnect(this.port);
      }, 15_000, `mosquitto on port ${this.port}`);
    } catch (err) {
      if (!exited) signalGroup(child, 'SIGKILL');
      throw err;
    }
  }
}
