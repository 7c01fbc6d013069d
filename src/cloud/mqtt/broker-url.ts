// The broker URL as mqtt.js's connection options, read with the WHATWG URL parser. Given a URL
// string, mqtt.js reads it with Node's legacy url.parse(), which prints a DEP0169
// DeprecationWarning to stderr at every start: a non-JSON line in the journal. Given these
// options instead, it never calls it. Same fields as mqtt.js takes from url.parse (pure).

export interface BrokerUrlOptions {
  protocol: 'mqtt' | 'mqtts' | 'ws' | 'wss';
  host: string;
  hostname: string;
  port?: number;
  /** WebSocket path and query (mqtt.js drops it for mqtt and mqtts). */
  path?: string;
  username?: string;
  password?: string;
}

const PROTOCOLS = new Set(['mqtt', 'mqtts', 'ws', 'wss']);

/** Throws on a URL the site-file check would have refused (never reached with a checked file). */
export function brokerUrlOptions(url: string): BrokerUrlOptions {
  const parsed = new URL(url);
  const protocol = parsed.protocol.replace(/:$/, '');
  if (!PROTOCOLS.has(protocol)) throw new Error(`unsupported broker URL scheme "${protocol}"`);
  // IPv6 literals come bracketed from WHATWG URL, bare from url.parse (what net.connect wants).
  const hostname = decodeURIComponent(parsed.hostname).replace(/^\[|\]$/g, '');
  const options: BrokerUrlOptions = { protocol: protocol as BrokerUrlOptions['protocol'], host: hostname, hostname };
  if (parsed.port !== '') options.port = Number(parsed.port);
  if (protocol === 'ws' || protocol === 'wss') options.path = `${parsed.pathname}${parsed.search}`;
  // As mqtt.js does with url.parse's auth: user and password from the URL, decoded.
  if (parsed.username !== '') options.username = decodeURIComponent(parsed.username);
  if (parsed.password !== '') options.password = decodeURIComponent(parsed.password);
  return options;
}
