// Pure checks that a reply is exactly the answer to its request (beyond what modbus-serial checks):
// the PDU length a function code must have, and the byte count / echo inside a parsed reply.

/** The largest Modbus PDU (function code + data) an ADU may carry. */
export const MAX_PDU_BYTES = 253;

/** What was asked: function code and quantity (registers or bits; 1 for FC5/FC6). */
export interface ExpectedReply {
  unit: number;
  functionCode: number;
  quantity: number;
  /** Start address (reads) or written address (writes): writes echo it. */
  address: number;
}

/** PDU bytes (function code included) of the normal reply, or undefined for a function we do not check. */
export function expectedPduLength(functionCode: number, quantity: number): number | undefined {
  switch (functionCode) {
    case 1:
    case 2:
      return 2 + Math.ceil(quantity / 8);
    case 3:
    case 4:
      return 2 + 2 * quantity;
    case 5:
    case 6:
    case 15:
    case 16:
      return 5;
    default:
      return undefined;
  }
}

/** Why a PDU is not the reply to `expected` (function code or its exception form, exact length); undefined when it is. */
export function pduMismatch(expected: ExpectedReply, pdu: Buffer): string | undefined {
  const code = pdu[0];
  if (code === (expected.functionCode | 0x80)) return pdu.length === 2 ? undefined : `exception reply of ${pdu.length} bytes`;
  if (code !== expected.functionCode) return `function code ${String(code)} (expected ${expected.functionCode})`;
  const length = expectedPduLength(expected.functionCode, expected.quantity);
  if (length !== undefined && pdu.length !== length) return `PDU of ${pdu.length} bytes (expected ${length})`;
  if (length !== undefined && expected.functionCode <= 4 && pdu[1] !== length - 2) return `byte count ${String(pdu[1])} (expected ${length - 2})`;
  return undefined;
}

/** A read reply as modbus-serial parsed it: `buffer` is the data after the byte count. */
export interface ParsedRead {
  data: ArrayLike<unknown>;
  buffer?: Buffer;
}

/** Why a parsed read reply does not carry exactly `quantity` items; undefined when it does. */
export function readReplyMismatch(functionCode: number, quantity: number, reply: ParsedRead): string | undefined {
  const bytes = (expectedPduLength(functionCode, quantity) ?? 2) - 2;
  const got = reply.buffer?.length;
  if (got !== bytes) return `byte count ${got === undefined ? 'missing' : got} (expected ${bytes})`;
  const items = functionCode <= 2 ? bytes * 8 : quantity;
  if (reply.data.length !== items) return `${reply.data.length} values (expected ${quantity})`;
  return undefined;
}

/** Why a write reply does not echo what was written (address; quantity for FC15/16); undefined when it does. */
export function writeEchoMismatch(expected: ExpectedReply, echo: { address?: unknown; length?: unknown }): string | undefined {
  if (echo.address !== expected.address) return `echoed address ${String(echo.address)} (expected ${expected.address})`;
  if ((expected.functionCode === 15 || expected.functionCode === 16) && echo.length !== expected.quantity) {
    return `echoed quantity ${String(echo.length)} (expected ${expected.quantity})`;
  }
  return undefined;
}
