#!/usr/bin/python3
"""Serves manufacturers' register tables (test/fixtures/profiles/manual/*.json) from pymodbus, an
independent Modbus TCP server (pymodbus 3.0, Debian's /usr/bin/python3), for fieldgate's profile tests.

Usage:
  pymodbus_manual_tables.py --tcp PORT --serve SPEC.json --expected OUT.json

SPEC.json: [{"unit": 1, "table": "path/to/manual/NAME.json", "identification": true}, ...]
Each row of a table gets a raw value of its own, encoded here from the table's format (uint16, int16,
uint32, int32, int64, uint64, float32, float64; multi-register values in the word order the table
records from its document, a row's "wordOrder" or the table's, big-endian when it records none; bytes
big-endian) at its hex address; rows of other formats (strings, bits) are not served and are
listed under "skipped". With "identification", its identification registers get their first
documented value. Unlisted registers between
a table's lowest and highest address hold 0. OUT.json receives, per unit, {"values": the value each
served row id must decode to, "skipped": the ids not served}; a value is raw x resolution x the change to the vocabulary's unit (kW -> W, Wh -> kWh), negated
where the table says its sign is export positive. This file knows nothing of fieldgate's codec.
Prints "READY <port>" once serving, then runs until killed.
"""
import argparse
import asyncio
import json
import logging
import sys

from pymodbus.datastore import ModbusSequentialDataBlock, ModbusServerContext, ModbusSlaveContext
from pymodbus.server import StartAsyncTcpServer

import struct

WORDS = {"uint16": 1, "int16": 1, "uint32": 2, "int32": 2, "int64": 4, "uint64": 4, "float32": 2, "float64": 4}
UNIT_CHANGE = {"kW": 1000, "kvar": 1000, "kVA": 1000, "Wh": 0.001, "varh": 0.001}


def raw_value(fmt, index):
    """A distinct in-range value per row, negative for every other signed row, never a NaN pattern."""
    if fmt == "uint16":
        return 1000 + 37 * index
    if fmt == "int16":
        return -(200 + 11 * index) if index % 2 else 300 + 13 * index
    if fmt == "uint32":
        return 123456 + 98765 * index
    if fmt == "int32":
        return -(234567 + 4321 * index) if index % 2 else 345678 + 8765 * index
    if fmt == "uint64":
        return 5_000_000_000 + 1_234_567 * index
    if fmt == "int64":
        return -(6_000_000_000 + 2_345_678 * index) if index % 2 else 7_000_000_000 + 3_456_789 * index
    if fmt in ("float32", "float64"):
        # Quarters are exact in both widths, so the expected value is the encoded one.
        return (-1 if index % 2 else 1) * (200.25 + 3.5 * index)
    raise ValueError(f"format {fmt} is not served")


def words_of(value, fmt, word_order):
    count = WORDS[fmt]
    if fmt == "float32":
        value = struct.unpack(">I", struct.pack(">f", value))[0]
    elif fmt == "float64":
        value = struct.unpack(">Q", struct.pack(">d", value))[0]
    unsigned = value % (1 << (16 * count))
    words = [(unsigned >> (16 * (count - 1 - i))) & 0xFFFF for i in range(count)]
    return words if word_order == "big" else list(reversed(words))


def string_words(text, length):
    data = text.encode("latin-1").ljust(length * 2, b"\0")
    return [(data[2 * i] << 8) | data[2 * i + 1] for i in range(length)]


def load(entry):
    table = json.load(open(entry["table"], encoding="utf-8"))
    registers = {"holding": {}, "input": {}}
    expected, skipped = {}, []
    for index, row in enumerate(table["registers"]):
        if row["format"] not in WORDS:
            skipped.append(row["id"])
            continue
        raw = raw_value(row["format"], index)
        address = int(row["hex"], 16)
        order = row.get("wordOrder", table.get("wordOrder", "big"))
        for offset, word in enumerate(words_of(raw, row["format"], order)):
            registers[row["table"]][address + offset] = word
        value = raw * row.get("resolution", 1) * UNIT_CHANGE.get(row.get("unit"), 1)
        expected[row["id"]] = -value if row.get("positive") == "export" else value
    for ident in table.get("identification", []) if entry.get("identification") else []:
        first = ident["values"][0]
        address = int(ident["hex"], 16)
        words = string_words(first, 16) if ident["format"] == "string" else words_of(first, ident["format"], table.get("wordOrder", "big"))
        for offset, word in enumerate(words):
            registers[ident["table"]][address + offset] = word
    return registers, {"values": expected, "skipped": skipped}


def block(values):
    if not values:
        return ModbusSequentialDataBlock(0, [0])
    low, high = min(values), max(values)
    return ModbusSequentialDataBlock(low, [values.get(a, 0) for a in range(low, high + 1)])


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tcp", type=int, required=True)
    parser.add_argument("--serve", required=True)
    parser.add_argument("--expected", required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)

    slaves, expected = {}, {}
    for entry in json.load(open(args.serve, encoding="utf-8")):
        registers, values = load(entry)
        slaves[entry["unit"]] = ModbusSlaveContext(hr=block(registers["holding"]), ir=block(registers["input"]), zero_mode=True)
        expected[str(entry["unit"])] = values
    with open(args.expected, "w", encoding="utf-8") as out:
        json.dump(expected, out)

    context = ModbusServerContext(slaves=slaves, single=False)
    server = await StartAsyncTcpServer(context=context, address=("127.0.0.1", args.tcp), defer_start=True, allow_reuse_address=True)
    task = asyncio.create_task(server.serve_forever())
    await asyncio.wait([task, server.serving], return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        print(f"cannot listen on 127.0.0.1:{args.tcp}: {task.exception()}", file=sys.stderr, flush=True)
        sys.exit(2)
    print(f"READY {server.server.sockets[0].getsockname()[1]}", flush=True)
    await task


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
