// What a handler gets: the state, the device link and the parsed request.
import type { IncomingHttpHeaders } from 'node:http';
import type { DeviceLink } from '../device-link.js';
import type { EmulatorState } from '../state/state.js';
import type { IssuedToken, TokenStore } from './tokens.js';

export interface RequestContext {
  state: EmulatorState;
  link: DeviceLink;
  query: URLSearchParams;
  body: unknown;
  headers: IncomingHttpHeaders;
}

/** Interface A: `token` is set for every operation except the two token operations. */
export interface ApiContext extends RequestContext {
  tokens: TokenStore;
  token: IssuedToken | undefined;
}
