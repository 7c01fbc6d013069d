#!/usr/bin/python3
"""An independent Modbus slave for fieldgate's interop tests (pymodbus 3.0, Debian's /usr/bin/python3).

Usage:
  pymodbus_slave.py --tcp PORT            Modbus TCP (MBAP) on 127.0.0.1:PORT (0 = any free port)
  pymodbus_slave.py --rtu-tcp PORT        RTU frames (with CRC) over TCP on 127.0.0.1:PORT
  pymodbus_slave.py --serial DEVICE       Modbus RTU on a serial device (e.g. one end of a socat pty pair)
Options:
  --units 1,2         unit ids that answer (others stay silent, like an absent device on RS-485)
  --garble-unit N     replies from unit N carry a wrong CRC (RTU framings only)
  --busy-unit N --busy-count K   unit N answers "slave device busy" (exception 6) K times first

Data per unit U: holding[i] = U*1000 + i, input[i] = U*1000 + 500 + i, coil[i] = i odd,
discrete[i] = i % 3 == 0, for i in 0..199 (address 200 and beyond: Illegal data address).
Prints "READY <port-or-device>" once serving, then runs until killed.
"""
import argparse
import asyncio
import logging
import struct
import sys

from pymodbus.datastore import ModbusSequentialDataBlock, ModbusServerContext, ModbusSlaveContext
from pymodbus.framer.rtu_framer import ModbusRtuFramer
from pymodbus.pdu import ExceptionResponse
from pymodbus.server import StartAsyncSerialServer, StartAsyncTcpServer
from pymodbus.utilities import computeCRC

SIZE = 200


def unit_context(unit):
    return ModbusSlaveContext(
        hr=ModbusSequentialDataBlock(0, [unit * 1000 + i for i in range(SIZE)]),
        ir=ModbusSequentialDataBlock(0, [unit * 1000 + 500 + i for i in range(SIZE)]),
        co=ModbusSequentialDataBlock(0, [i % 2 == 1 for i in range(SIZE)]),
        di=ModbusSequentialDataBlock(0, [i % 3 == 0 for i in range(SIZE)]),
        zero_mode=True,
    )


def make_manipulator(args):
    busy_left = {"count": args.busy_count}

    def manipulate(response):
        unit = response.unit_id
        if args.busy_unit is not None and unit == args.busy_unit and busy_left["count"] > 0:
            busy_left["count"] -= 1
            busy = ExceptionResponse(response.function_code & 0x7F, 6)
            busy.unit_id = unit
            busy.transaction_id = response.transaction_id
            return busy, False
        if args.garble_unit is not None and unit == args.garble_unit:
            frame = struct.pack(">BB", unit, response.function_code) + response.encode()
            bad_crc = computeCRC(frame) ^ 0x5A5A
            return frame + struct.pack(">H", bad_crc), True
        return response, False

    return manipulate


async def main():
    parser = argparse.ArgumentParser()
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--tcp", type=int)
    mode.add_argument("--rtu-tcp", type=int)
    mode.add_argument("--serial")
    parser.add_argument("--units", default="1")
    parser.add_argument("--garble-unit", type=int)
    parser.add_argument("--busy-unit", type=int)
    parser.add_argument("--busy-count", type=int, default=0)
    args = parser.parse_args()

    logging.basicConfig(level=logging.CRITICAL)
    units = [int(u) for u in args.units.split(",") if u]
    context = ModbusServerContext(slaves={u: unit_context(u) for u in units}, single=False)
    manipulator = make_manipulator(args)

    if args.serial:
        server = await StartAsyncSerialServer(
            context=context, framer=ModbusRtuFramer, port=args.serial, baudrate=19200,
            defer_start=True, response_manipulator=manipulator,
        )
        await server.start()
        if server.transport is None:
            print(f"cannot open {args.serial}", file=sys.stderr, flush=True)
            sys.exit(2)
        print(f"READY {args.serial}", flush=True)
        await server.serve_forever()
        return

    port = args.tcp if args.tcp is not None else args.rtu_tcp
    kwargs = {"framer": ModbusRtuFramer} if args.rtu_tcp is not None else {}
    server = await StartAsyncTcpServer(
        context=context, address=("127.0.0.1", port), defer_start=True, allow_reuse_address=True,
        response_manipulator=manipulator, **kwargs,
    )
    task = asyncio.create_task(server.serve_forever())
    await asyncio.wait([task, server.serving], return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        print(f"cannot listen on 127.0.0.1:{port}: {task.exception()}", file=sys.stderr, flush=True)
        sys.exit(2)
    bound = server.server.sockets[0].getsockname()[1]
    print(f"READY {bound}", flush=True)
    await task


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
