// A byte pipe to a stream target (raw serial port or TCP socket): what the relay needs of it.
export interface ByteEndpoint {
  readonly target: string;
  /** Each chunk is a complete reply already (no need to wait for the line to go quiet). */
  readonly deliversWholeReplies?: boolean;
  open(): Promise<void>;
  write(data: Buffer): Promise<void>;
  /** Every chunk read from the target. */
  onData(listener: (chunk: Buffer) => void): void;
  /** Called once per open session when the target goes away. */
  onClose(listener: (reason: string) => void): void;
  close(): Promise<void>;
}
