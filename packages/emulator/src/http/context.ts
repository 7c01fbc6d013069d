// What a handler gets: the state, the device link and the parsed request.
import type { IncomingHttpHeaders } from 'node:http';
import type { DeviceLink } from '../device-link.js';
import type { JsonLimits } from '../json-limits.js';
import type { EmulatorState } from '../state/state.js';
import type { IssuedToken, TokenStore } from './tokens.js';

export interface RequestContext {
  state: EmulatorState;
  link: DeviceLink;
  query: URLSearchParams;
  body: unknown;
  headers: IncomingHttpHeaders;
  /** Bounds for JSON carried elsewhere than the body (B's `?params=`). */
  jsonLimits: JsonLimits;
}

/** Interface A: `token` is set for every operation except the two token operations. */
export interface ApiContext extends RequestContext {
  tokens: TokenStore;
  token: IssuedToken | undefined;
}
