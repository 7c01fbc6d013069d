// A small path router: `/api/v1/device/:device_id/tags` patterns, exact segment count.

export interface HttpResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export type Handler<C> = (ctx: C, params: Record<string, string>) => HttpResult | Promise<HttpResult>;

interface Route<C> {
  method: string;
  segments: string[];
  handler: Handler<C>;
  /** Token operations answer without an Authorization header. */
  open: boolean;
}

export interface RouteMatch<C> {
  handler: Handler<C>;
  params: Record<string, string>;
  open: boolean;
}

/**
 * Segments after the leading `/`. One trailing `/` is dropped (`/api/v1/project/` is the project,
 * as most HTTP stacks treat it); other empty segments are kept, so `//` names no route.
 */
function split(path: string): string[] {
  const trimmed = path.length > 1 && path.endsWith('/') && !path.endsWith('//') ? path.slice(0, -1) : path;
  return (trimmed.startsWith('/') ? trimmed.slice(1) : trimmed).split('/');
}

export class Router<C> {
  private readonly routes: Route<C>[] = [];

  add(method: string, pattern: string, handler: Handler<C>, options: { open?: boolean } = {}): this {
    this.routes.push({ method, segments: split(pattern), handler, open: options.open ?? false });
    return this;
  }

  get(pattern: string, handler: Handler<C>): this {
    return this.add('GET', pattern, handler);
  }
  post(pattern: string, handler: Handler<C>): this {
    return this.add('POST', pattern, handler);
  }
  put(pattern: string, handler: Handler<C>): this {
    return this.add('PUT', pattern, handler);
  }
  delete(pattern: string, handler: Handler<C>): this {
    return this.add('DELETE', pattern, handler);
  }

  /** The route for this method and path, or undefined (the caller answers "Request invalid"). */
  match(method: string, path: string): RouteMatch<C> | undefined {
    const parts = split(path);
    for (const route of this.routes) {
      if (route.method !== method || route.segments.length !== parts.length) continue;
      const params = matchSegments(route.segments, parts);
      if (params) return { handler: route.handler, params, open: route.open };
    }
    return undefined;
  }
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i += 1) {
    const want = pattern[i];
    const got = parts[i];
    if (got === '') return undefined;
    if (want.startsWith(':')) {
      try {
        params[want.slice(1)] = decodeURIComponent(got);
      } catch {
        return undefined;
      }
    } else if (want !== got) {
      return undefined;
    }
  }
  return params;
}

export function ok(body: unknown): HttpResult {
  return { status: 200, body };
}

/** Interface A success. */
export function info(value: unknown): HttpResult {
  return ok({ result: true, info: value });
}
