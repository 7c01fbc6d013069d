// node:http front: picks the interface, rate-limits A, parses JSON, authenticates, renders errors.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from 'fieldgate/workspace-kit';
import type { DeviceLink } from '../device-link.js';
import { parseBoundedJson, type JsonLimits } from '../json-limits.js';
import type { EmulatorState } from '../state/state.js';
import type { ApiContext, RequestContext } from './context.js';
import { ApiError, ErrCode, invalidFields } from './errors.js';
import type { RateLimiter } from './rate-limit.js';
import type { HttpResult, Router } from './router.js';
import type { TokenStore } from './tokens.js';

const API_PREFIX = '/api/v1/';
const APP_PREFIXES = ['/app/device/v1/', '/device/v1/'];
/** The emulator's own read-only status (no cloud route): counters readable while it runs. */
export const STATUS_PATH = '/emulator/v1/status';

export interface HttpServerDeps {
  state: EmulatorState;
  link: DeviceLink;
  tokens: TokenStore;
  limiter: RateLimiter;
  apiRouter: Router<ApiContext>;
  appRouter: Router<RequestContext>;
  log: Logger;
  jsonLimits: JsonLimits;
  /** The body of GET STATUS_PATH, taken fresh on each request. */
  status(): unknown;
}

type Flavour = 'A' | 'B';

class BadJson extends Error {}
class BodyTooLarge extends Error {}

const REQUEST_INVALID: HttpResult = { status: 404, body: { message: 'Request invalid' } };

function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) reject(new BodyTooLarge());
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** An empty body is no body; too deep is a field problem (400), not "Invalid JSON message". */
function parseBody(bytes: Buffer, limits: JsonLimits): unknown {
  const text = bytes.toString('utf8');
  if (text.replace(/^\uFEFF/, '').trim() === '') return undefined;
  const parsed = parseBoundedJson(text, bytes.length, limits);
  if (parsed.ok) return parsed.value;
  if (parsed.problem === 'syntax') throw new BadJson();
  if (parsed.problem === 'size') throw new BodyTooLarge();
  throw invalidFields([{ field: '(body)', message: parsed.message }]);
}

/** Failure body: A uses `result: false` and `errors`, B a numeric `result: 0`. */
export function errorResult(flavour: Flavour, err: ApiError): HttpResult {
  const body = flavour === 'A'
    ? { result: false, errcode: err.errcode, message: err.message, errors: err.errors }
    : { result: 0, errcode: err.errcode, message: err.message, ...(err.errors.length > 0 ? { errors: err.errors } : {}) };
  return { status: 200, body };
}

/** A handler bug: still the interface's failure shape, so clients parse it like any failure. */
export function internalErrorResult(flavour: Flavour): HttpResult {
  return errorResult(flavour, new ApiError(500, 'Internal error'));
}

function invalidJson(flavour: Flavour): HttpResult {
  return { status: 404, body: { result: flavour === 'A' ? false : 0, message: 'Invalid JSON message', errcode: ErrCode.invalidJson } };
}

/** Device credentials travel in B paths: keep them out of logs. */
function loggablePath(path: string): string {
  return path.replace(/^\/app\/device\/v1\/[^/]+/, '/app/device/v1/[redacted]');
}

export function createHttpServer(deps: HttpServerDeps): Server {
  const { log } = deps;

  async function handle(req: IncomingMessage): Promise<HttpResult> {
    const url = new URL(req.url ?? '/', 'http://emulator.local');
    const method = req.method ?? 'GET';
    const base: RequestContext = {
      state: deps.state, link: deps.link, query: url.searchParams, body: undefined, headers: req.headers, jsonLimits: deps.jsonLimits,
    };

    if (url.pathname.startsWith(API_PREFIX)) {
      const rate = deps.limiter.take();
      const result = rate.allowed
        ? await handleApi(req, method, url.pathname, base)
        : { status: 429, body: { result: false, errcode: ErrCode.rateLimited, message: 'Too Many Requests', errors: [] } };
      return { ...result, headers: { ...result.headers, ...rate.headers } };
    }
    if (APP_PREFIXES.some((p) => url.pathname.startsWith(p))) {
      const match = deps.appRouter.match(method, url.pathname);
      if (!match) return REQUEST_INVALID;
      return run('B', req, base, (ctx) => match.handler(ctx, match.params));
    }
    if (url.pathname === STATUS_PATH) {
      // Read-only: any other method is answered, never acted on.
      if (method !== 'GET' && method !== 'HEAD') return { status: 405, body: { message: 'Method not allowed' }, headers: { Allow: 'GET, HEAD' } };
      return { status: 200, body: deps.status() };
    }
    return REQUEST_INVALID;
  }

  async function handleApi(req: IncomingMessage, method: string, path: string, base: RequestContext): Promise<HttpResult> {
    const match = deps.apiRouter.match(method, path);
    if (!match) return REQUEST_INVALID;
    return run('A', req, base, (ctx) => {
      const apiCtx: ApiContext = { ...ctx, tokens: deps.tokens, token: undefined };
      if (!match.open) apiCtx.token = deps.tokens.verify(req.headers.authorization);
      return match.handler(apiCtx, match.params);
    });
  }

  async function run(
    flavour: Flavour, req: IncomingMessage, base: RequestContext, call: (ctx: RequestContext) => HttpResult | Promise<HttpResult>,
  ): Promise<HttpResult> {
    try {
      const body = parseBody(await readBody(req, deps.jsonLimits.maxBytes), deps.jsonLimits);
      return await call({ ...base, body });
    } catch (err) {
      if (err instanceof BadJson) return invalidJson(flavour);
      if (err instanceof BodyTooLarge) return errorResult(flavour, new ApiError(ErrCode.bodyTooLarge, 'Request body too large'));
      if (err instanceof ApiError) return errorResult(flavour, err);
      log.error({ err }, 'request handler failed');
      return { ...internalErrorResult(flavour), status: 500 };
    }
  }

  function write(res: ServerResponse, result: HttpResult): void {
    const text = JSON.stringify(result.body);
    res.writeHead(result.status, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(text),
      ...result.headers,
    });
    res.end(text);
  }

  /** Whatever fails while rendering (a value JSON.stringify cannot take), the response still ends. */
  function send(res: ServerResponse, result: HttpResult, flavour: Flavour): number {
    try {
      write(res, result);
      return result.status;
    } catch (err) {
      log.error({ err }, 'response not serialisable');
      if (res.headersSent) {
        res.destroy();
        return result.status;
      }
      const failure = { ...internalErrorResult(flavour), status: 500, headers: result.headers };
      write(res, failure);
      return failure.status;
    }
  }

  return createServer((req, res) => {
    const started = performance.now();
    const path = (req.url ?? '').split('?')[0];
    const flavour: Flavour = path.startsWith(API_PREFIX) ? 'A' : 'B';
    handle(req)
      .catch((err: unknown): HttpResult => {
        log.error({ err }, 'request failed');
        return { ...internalErrorResult(flavour), status: 500 };
      })
      .then((result) => {
        const status = send(res, result, flavour);
        log.debug({ method: req.method, path: loggablePath(path), status, ms: Math.round(performance.now() - started) }, 'http request');
      })
      .catch((err: unknown) => {
        log.warn({ err }, 'response write failed');
        res.destroy();
      });
  });
}
