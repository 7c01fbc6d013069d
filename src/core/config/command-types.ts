// Site-file shapes for cloud-to-device commands and custom data streams (normalised).

/** Where a written value comes from: a literal in the site file, or a key of the command's params. */
export type ValueSource = { value: unknown } | { param: string };

export type CommandStep =
  | ({ kind: 'write'; point: string } & ValueSource)
  | { kind: 'read'; points: string[] }
  | { kind: 'delay'; ms: number }
  /** Write a value, hold it for `ms`, then write `restore` (e.g. a relay pulse). */
  | ({ kind: 'pulse'; point: string; ms: number; restore: unknown } & ValueSource);

export interface CommandConfig {
  /** The `method` of `command/send/<id>`. */
  method: string;
  /** Params keys that must be present. */
  requiredParams: string[];
  steps: CommandStep[];
}

/** Where the raw bytes of a custom data stream (`data/<identifier>/set`) go. */
export type StreamTarget =
  | { kind: 'serial'; path: string; baudRate: number; parity: 'none' | 'even' | 'odd'; dataBits: 7 | 8; stopBits: 1 | 2 }
  /** A line shared with Modbus: bytes go through the bus scheduler; the reply is collected until quiet. */
  | { kind: 'bus'; bus: string }
  | { kind: 'tcp'; host: string; port: number };

export interface StreamConfig {
  identifier: string;
  target: StreamTarget;
  /** The reply is complete after this much silence. */
  quietMs: number;
  /** Give up collecting a reply after this long. */
  replyTimeoutMs: number;
  maxReplyBytes: number;
}
