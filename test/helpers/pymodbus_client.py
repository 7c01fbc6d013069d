"""An independent Modbus TCP master (pymodbus) for tests: runs the requests given as JSON and
prints one JSON line of results: {"registers": [...]}, {"bits": [...]}, {"ok": true} or
{"exception": code}; {"error": text} when nothing usable came back.

usage: pymodbus_client.py PORT '[{"fc": 3, "unit": 1, "address": 0, "count": 10}, ...]'
"""
import json
import sys

from pymodbus.client import ModbusTcpClient


def run(client, op):
    fc, unit, address = op["fc"], op["unit"], op["address"]
    if fc == 1:
        rr = client.read_coils(address, op["count"], slave=unit)
    elif fc == 2:
        rr = client.read_discrete_inputs(address, op["count"], slave=unit)
    elif fc == 3:
        rr = client.read_holding_registers(address, op["count"], slave=unit)
    elif fc == 4:
        rr = client.read_input_registers(address, op["count"], slave=unit)
    elif fc == 6:
        rr = client.write_register(address, op["values"][0], slave=unit)
    elif fc == 16:
        rr = client.write_registers(address, op["values"], slave=unit)
    elif fc == 5:
        rr = client.write_coil(address, op["values"][0], slave=unit)
    else:
        return {"error": "unsupported fc %d" % fc}
    if rr is None:
        return {"error": "no response"}
    if rr.isError():
        code = getattr(rr, "exception_code", None)
        return {"exception": code} if code is not None else {"error": str(rr)}
    if fc in (3, 4):
        return {"registers": list(rr.registers)}
    if fc in (1, 2):
        return {"bits": [bool(b) for b in rr.bits[: op["count"]]]}
    return {"ok": True}


def main():
    port = int(sys.argv[1])
    ops = json.loads(sys.argv[2])
    client = ModbusTcpClient("127.0.0.1", port=port, timeout=5, retries=0)
    if not client.connect():
        print(json.dumps([{"error": "connect failed"}]))
        return
    results = []
    for op in ops:
        try:
            results.append(run(client, op))
        except Exception as err:  # noqa: BLE001 - reported to the test as data
            results.append({"error": "%s: %s" % (type(err).__name__, err)})
    client.close()
    print(json.dumps(results))


main()
