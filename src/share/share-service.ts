// What a bus share does with each request of a client: the client's rate and queue bounds, the
// share's policy, an answer from the read cache when allowed, or the request on the bus as its own
// class ('share'), through the same admission, reply matching, late guard and cool-down as polls,
// within the share's cap in the bus (`maxQueued`, all clients together). Every request is
// answered: a reply, or the exception a Modbus gateway gives. A read that may come from memory
// waits for the client's earlier requests (a write among them changes what memory may say), and
// a client that leaves takes its requests still waiting out of the bus queue.
import type { ShareConfig } from '../core/config/share.js';
import type { Logger } from '../core/logger.js';
import type { MbapFrame } from '../core/modbus/mbap-framer.js';
import {
  EXCEPTION, exceptionPdu, parseRequestPdu, readReplyPdu, requestSpan, writeReplyPdu, type ShareRequest,
} from '../core/modbus/mbap-request.js';
import type { ReadCache } from '../core/modbus/read-cache.js';
import type { BroadcastWrite } from '../core/modbus/broadcast-frame.js';
import type { SharePolicy } from '../core/modbus/share-policy.js';
import type { Table } from '../core/points/types.js';
import { QueueFullError } from '../core/queue-full-error.js';
import { RecentSamples } from '../core/recent-samples.js';
import type { Clock } from '../core/time.js';
import type { ReadBlock } from '../core/points/codec.js';
import type { RequestOptions } from '../field/modbus/bus-request.js';
import {
  InvalidRequestError, keptFromDevice, ModbusExceptionError, ModbusTimeoutError, PortClosedError, RequestCancelledError, RequestExpiredError,
} from '../field/modbus/errors.js';
import type { ShareClient, ShareRequestHandler } from './share-server.js';

/** What the share needs of its bus (Bus has it). */
export interface ShareBus {
  read(unit: number, table: Table, start: number, count: number, options?: RequestOptions): Promise<ReadBlock<Uint16Array>>;
  writeRegisters(unit: number, address: number, values: readonly number[], options?: RequestOptions & { forceMulti?: boolean }): Promise<void>;
  writeCoils(unit: number, address: number, values: readonly boolean[], options?: RequestOptions & { forceMulti?: boolean }): Promise<void>;
  broadcast(write: BroadcastWrite, turnaroundMs: number, options?: RequestOptions): Promise<void>;
}

export interface ShareCounters {
  requests: number;
  forwarded: number;
  fromCache: number;
  refusedByPolicy: number;
  /** Answered "server busy": over the client's rate or queue depth, or the share's `maxQueued`. */
  busy: number;
  /** Forwarded but answered with an exception (timeout, unit cooling down, bus down, device exception). */
  failed: number;
  /** Forwarded, then taken out of the bus queue before the line: its client had left. */
  cancelled: number;
}

export interface ShareServiceOptions {
  bus: ShareBus;
  config: ShareConfig;
  policy: SharePolicy;
  /** Present when `cacheMs` > 0. */
  cache?: ReadCache;
  /** A forwarded write succeeded (bus unit 0: a broadcast was sent): the points covering it are read back (ops wires the devices). */
  written?: (busUnit: number, table: Table, first: number, last: number) => void;
  clock: Clock;
  log: Logger;
}

interface ClientState {
  tokens: number;
  refilledAt: number;
  /** Requests not answered yet: in the bus, or waiting for an earlier one (`queueDepth`). */
  unanswered: number;
  /** Settles once every request so far has been answered. */
  allAnswered: Promise<void>;
  /** Aborted when the client leaves: its requests still waiting leave the bus queue. */
  owner: AbortController;
  /** Logged once per connection: a client at its limit would otherwise log at its own rate. */
  busyLogged: boolean;
  refusalLogged: boolean;
}

export class ShareService implements ShareRequestHandler {
  readonly counters: ShareCounters = { requests: 0, forwarded: 0, fromCache: 0, refusedByPolicy: 0, busy: 0, failed: 0, cancelled: 0 };
  private readonly waits = new RecentSamples();
  private readonly clients = new Map<number, ClientState>();
  /** Requests of every client in the bus now (waiting or on the line), against `maxQueued`. */
  private inBus = 0;
  /** The cap was reached: logged once, and once more when the share's requests have all left the bus. */
  private atCap = false;

  private policy: SharePolicy;

  constructor(private readonly options: ShareServiceOptions) {
    this.policy = options.policy;
  }

  /** The bus's devices changed (a reload): the default unit map follows them, clients stay connected. */
  setPolicy(policy: SharePolicy): void {
    this.policy = policy;
  }

  /** Queue wait of forwarded requests (ms), over the last 1024. */
  queueWait(): { p50?: number; p99?: number } {
    return { p50: this.waits.percentile(50), p99: this.waits.percentile(99) };
  }

  /** Requests of the share in the bus now (waiting or on the line). */
  get queued(): number {
    return this.inBus;
  }

  /** Clients the share keeps state for (those that sent a request and are still connected). */
  get trackedClients(): number {
    return this.clients.size;
  }

  /** The client left: what it still has waiting in the bus queue leaves it, nothing of it stays. */
  closed(client: ShareClient): void {
    const state = this.clients.get(client.id);
    this.clients.delete(client.id);
    state?.owner.abort();
  }

  request(client: ShareClient, frame: MbapFrame, answer: (pdu: Buffer) => void): void {
    const { config, clock } = this.options;
    const policy = this.policy;
    this.counters.requests += 1;
    const state = this.stateOf(client.id);
    const parsed = parseRequestPdu(frame.pdu);
    const functionCode = parsed.ok ? parsed.request.functionCode : parsed.functionCode;
    if (!this.takeToken(state) || state.unanswered >= config.queueDepth) {
      this.counters.busy += 1;
      if (!state.busyLogged) {
        state.busyLogged = true;
        this.options.log.warn({ client: client.remote, ratePerSecond: config.ratePerSecond, queueDepth: config.queueDepth }, 'share client over its rate or queue: answered server busy (further busy answers to it are only counted)');
      }
      return answer(exceptionPdu(functionCode, EXCEPTION.serverBusy));
    }
    if (!parsed.ok) return answer(this.refuse(client, state, frame.unit, functionCode, parsed.exception, 'malformed or unsupported request'));
    const decision = policy.decide(frame.unit, parsed.request);
    if (!decision.ok) return answer(this.refuse(client, state, frame.unit, functionCode, decision.exception, decision.reason));
    const request = parsed.request;
    const earlierUnanswered = state.unanswered > 0;
    const earlier = state.allAnswered;
    let answered = (): void => undefined;
    const mine = new Promise<void>((resolve) => { answered = resolve; });
    state.allAnswered = earlier.then(() => mine);
    state.unanswered += 1;
    const reply = (pdu: Buffer) => {
      state.unanswered -= 1;
      answered();
      answer(pdu);
    };
    const serve = () => this.serve(client, state, decision.busUnit, request, decision.broadcast === true, reply);
    // From memory only once the earlier requests were answered: a write among them may change it.
    if (earlierUnanswered && this.mayUseCache(request)) void earlier.then(serve);
    else serve();
  }

  private mayUseCache(request: ShareRequest): boolean {
    return request.kind === 'read' && this.options.cache !== undefined && this.options.config.cacheMs > 0;
  }

  /** Answers `request` from memory, or forwards it to the bus within the share's cap. */
  private serve(client: ShareClient, state: ClientState, unit: number, request: ShareRequest, broadcast: boolean, reply: (pdu: Buffer) => void): void {
    const { config, cache, clock } = this.options;
    if (request.kind === 'read' && cache && config.cacheMs > 0) {
      const hit = cache.lookup(unit, request.table, request.start, request.count, clock.now(), config.cacheMs);
      if (hit) {
        this.counters.fromCache += 1;
        return reply(readReplyPdu(request, hit));
      }
    }
    if (state.owner.signal.aborted) return; // the client left while this waited for its turn: nobody to answer
    if (this.inBus >= config.maxQueued) {
      this.counters.busy += 1;
      if (!this.atCap) {
        this.atCap = true;
        this.options.log.warn({ maxQueued: config.maxQueued, client: client.remote }, 'share requests at their cap in the bus queue: further ones answered server busy');
      }
      return reply(exceptionPdu(request.functionCode, EXCEPTION.serverBusy));
    }
    this.inBus += 1;
    void this.forward(client, unit, request, broadcast, state.owner.signal).then((pdu) => {
      this.inBus -= 1;
      if (this.atCap && this.inBus === 0) {
        this.atCap = false;
        this.options.log.info({ maxQueued: config.maxQueued }, 'share requests below their cap again');
      }
      reply(pdu);
    });
  }

  private async forward(client: ShareClient, unit: number, request: ShareRequest, broadcast: boolean, signal: AbortSignal): Promise<Buffer> {
    const { bus, config, clock } = this.options;
    const queuedAt = clock.now();
    let started = false;
    const options: RequestOptions = {
      priority: 'share',
      signal,
      // Its master has given up by then: the line's time goes to a request still awaited.
      queueDeadlineMs: config.maxQueueWaitMs,
      ...(config.timeoutMs === undefined ? {} : { timeoutMs: config.timeoutMs }),
      onStart: () => {
        if (started) return; // a repeat after "busy"
        started = true;
        this.waits.add(clock.now() - queuedAt);
      },
    };
    this.counters.forwarded += 1;
    try {
      if (request.kind === 'read') {
        const block = await bus.read(unit, request.table, request.start, request.count, options);
        return readReplyPdu(request, block);
      }
      const span = requestSpan(request);
      this.options.log.info({ client: client.remote, unit, function: request.functionCode, address: span.first, count: request.values.length, ...(broadcast ? { broadcast } : {}) }, 'share write forwarded');
      const forceMulti = request.functionCode === 15 || request.functionCode === 16;
      // A broadcast's reply means "sent and the turnaround passed": no unit confirms it.
      if (broadcast) await bus.broadcast(broadcastWrite(request, forceMulti), config.broadcastTurnaroundMs, options);
      else if (request.kind === 'write-registers') await bus.writeRegisters(unit, request.address, request.values, { ...options, forceMulti });
      else await bus.writeCoils(unit, request.address, request.values, { ...options, forceMulti });
      this.options.written?.(unit, span.table, span.first, span.last);
      return writeReplyPdu(request);
    } catch (err) {
      if (err instanceof RequestCancelledError) this.counters.cancelled += 1;
      else this.counters.failed += 1;
      return exceptionPdu(request.functionCode, exceptionFor(err));
    }
  }

  private refuse(client: ShareClient, state: ClientState, unit: number, functionCode: number, exception: number, reason: string): Buffer {
    this.counters.refusedByPolicy += 1;
    if (!state.refusalLogged) {
      state.refusalLogged = true;
      this.options.log.warn({ client: client.remote, unit, function: functionCode, exception, reason }, 'share request refused (further refusals of this client are only counted)');
    }
    return exceptionPdu(functionCode, exception);
  }

  private stateOf(id: number): ClientState {
    let state = this.clients.get(id);
    if (!state) {
      state = {
        tokens: this.burst(), refilledAt: this.options.clock.now(), unanswered: 0, allAnswered: Promise.resolve(),
        owner: new AbortController(), busyLogged: false, refusalLogged: false,
      };
      this.clients.set(id, state);
    }
    return state;
  }

  /** Requests a client may send at once before its rate holds it back. */
  private burst(): number {
    return Math.max(1, this.options.config.ratePerSecond);
  }

  private takeToken(state: ClientState): boolean {
    const now = this.options.clock.now();
    state.tokens = Math.min(this.burst(), state.tokens + ((now - state.refilledAt) / 1000) * this.options.config.ratePerSecond);
    state.refilledAt = now;
    if (state.tokens < 1) return false;
    state.tokens -= 1;
    return true;
  }
}

/** The bus's write operation for a client's write request (two branches: each keeps its values' type). */
function broadcastWrite(request: Exclude<ShareRequest, { kind: 'read' }>, forceMulti: boolean): BroadcastWrite {
  return request.kind === 'write-registers'
    ? { kind: request.kind, address: request.address, values: request.values, forceMulti }
    : { kind: request.kind, address: request.address, values: request.values, forceMulti };
}

/** The exception a Modbus gateway answers for what went wrong on the line. */
export function exceptionFor(err: unknown): number {
  if (err instanceof ModbusExceptionError) return err.code;
  if (err instanceof ModbusTimeoutError) return EXCEPTION.gatewayTargetNoResponse;
  if (err instanceof QueueFullError || err instanceof RequestExpiredError) return EXCEPTION.serverBusy;
  if (keptFromDevice(err) || err instanceof PortClosedError) return EXCEPTION.gatewayPathUnavailable;
  if (err instanceof InvalidRequestError) return EXCEPTION.illegalDataValue;
  // A garbled or mismatched reply (CRC, length, echo): nothing usable came back from the target.
  return EXCEPTION.gatewayTargetNoResponse;
}
