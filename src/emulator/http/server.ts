// node:http front: picks the interface, rate-limits A, parses JSON, authenticates, renders errors.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from '../../log.js';
import type { DeviceLink } from '../device-link.js';
import type { EmulatorState } from '../state/state.js';
import type { ApiContext, RequestContext } from './context.js';
import { ApiError, ErrCode } from './errors.js';
import type { RateLimiter } from './rate-limit.js';
import type { HttpResult, Router } from './router.js';
import type { TokenStore } from './tokens.js';

const MAX_BODY_BYTES = 1024 * 1024;
const API_PREFIX = '/api/v1/';
const APP_PREFIXES = ['/app/device/v1/', '/device/v1/'];

export interface HttpServerDeps {
  state: EmulatorState;
  link: DeviceLink;
  tokens: TokenStore;
  limiter: RateLimiter;
  apiRouter: Router<ApiContext>;
  appRouter: Router<RequestContext>;
  log: Logger;
}

type Flavour = 'A' | 'B';

class BadJson extends Error {}
class BodyTooLarge extends Error {}

const REQUEST_INVALID: HttpResult = { status: 404, body: { message: 'Request invalid' } };

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) reject(new BodyTooLarge());
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new BadJson();
  }
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
    const base: RequestContext = { state: deps.state, link: deps.link, query: url.searchParams, body: undefined, headers: req.headers };

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
      const body = parseJson(await readBody(req));
      return await call({ ...base, body });
    } catch (err) {
      if (err instanceof BadJson) return invalidJson(flavour);
      if (err instanceof BodyTooLarge) return errorResult(flavour, new ApiError(ErrCode.bodyTooLarge, 'Request body too large'));
      if (err instanceof ApiError) return errorResult(flavour, err);
      log.error({ err }, 'request handler failed');
      return { ...internalErrorResult(flavour), status: 500 };
    }
  }

  function send(res: ServerResponse, result: HttpResult): void {
    const text = JSON.stringify(result.body);
    res.writeHead(result.status, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(text),
      ...result.headers,
    });
    res.end(text);
  }

  return createServer((req, res) => {
    const started = performance.now();
    handle(req)
      .catch((err: unknown): HttpResult => {
        log.error({ err }, 'request failed');
        return { status: 500, body: { message: 'Internal error' } };
      })
      .then((result) => {
        send(res, result);
        log.debug({ method: req.method, path: loggablePath((req.url ?? '').split('?')[0]), status: result.status, ms: Math.round(performance.now() - started) }, 'http request');
      })
      .catch((err: unknown) => log.warn({ err }, 'response write failed'));
  });
}
