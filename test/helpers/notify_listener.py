# An independent NOTIFY_SOCKET listener, as systemd reads it: a unix datagram socket with
# SO_PASSCRED, so each datagram carries the sender's pid (what NotifyAccess=main checks).
# Usage: notify_listener.py PATH   (PATH starting with "@" binds in the abstract namespace)
# Prints one JSON line per event: {"listening": true}, then {"pid": N, "message": "..."}.
import json
import socket
import struct
import sys

path = sys.argv[1]
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
sock.bind("\0" + path[1:] if path.startswith("@") else path)
print(json.dumps({"listening": True}), flush=True)
while True:
    message, ancillary, _flags, _addr = sock.recvmsg(65536, socket.CMSG_SPACE(12))
    pid = None
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
            pid = struct.unpack("iII", data[:12])[0]
    print(json.dumps({"pid": pid, "message": message.decode("utf-8", "replace")}), flush=True)
