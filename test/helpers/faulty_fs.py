#!/usr/bin/python3
# A passthrough FUSE filesystem that makes reads of a byte range of a named file fail with EIO, on
# command, and heal: an SD card with a worn cell, a loose contact or a brown-out, seen by the
# process above it as the kernel would pass it on. Used by test/helpers/faulty-fs.ts.
#
#   faulty_fs.py BACKING_DIR MOUNTPOINT CONTROL_FILE
#
# CONTROL_FILE holds JSON: {"gen": N, "faults": [{"name": "state/outbox.sqlite", "from": B, "to": B}]}
# (a path under the mount, bytes, `to` exclusive). A fault follows the file the name had when it was applied (its inode),
# as damage on a card follows the data: a file renamed aside keeps it, a fresh one by that name not. It is read again whenever its mtime changes; the generation applied and
# how many reads failed so far are written to CONTROL_FILE + ".ack" as {"gen": N, "eio": M}. Every
# read of a faulted file goes to this process (direct I/O, no page cache), so a fault bites at once.
import errno
import json
import os
import sys
import threading

import fuse
from fuse import Fuse

fuse.fuse_python_api = (0, 2)

BACKING, MOUNTPOINT, CONTROL = (os.path.abspath(a) for a in sys.argv[1:4])
lock = threading.Lock()
state = {'mtime': None, 'gen': 0, 'faults': [], 'eio': 0}


def real(path):
    return os.path.join(BACKING, path.lstrip('/'))


def write_ack():
    tmp = CONTROL + '.ack.tmp'
    with open(tmp, 'w') as f:
        json.dump({'gen': state['gen'], 'eio': state['eio']}, f)
    os.replace(tmp, CONTROL + '.ack')


def refresh():
    try:
        mtime = os.stat(CONTROL).st_mtime_ns
    except FileNotFoundError:
        return
    if mtime == state['mtime']:
        return
    try:
        with open(CONTROL) as f:
            spec = json.load(f)
    except (OSError, ValueError):
        return  # Half written: the next read tries again.
    state['mtime'] = mtime
    state['gen'] = spec.get('gen', 0)
    faults = []
    for fault in spec.get('faults', []):
        try:
            faults.append(dict(fault, ino=os.stat(real(fault['name'])).st_ino))
        except FileNotFoundError:
            pass
    state['faults'] = faults
    write_ack()


def faulted(ino, offset, length):
    with lock:
        refresh()
        for fault in state['faults']:
            if fault['ino'] == ino and offset < fault['to'] and offset + length > fault['from']:
                state['eio'] += 1
                write_ack()
                return True
    return False


class FaultyFs(Fuse):
    def getattr(self, path):
        return os.lstat(real(path))

    def readdir(self, path, offset):
        for name in ['.', '..'] + os.listdir(real(path)):
            yield fuse.Direntry(name)

    def unlink(self, path):
        os.unlink(real(path))

    def rmdir(self, path):
        os.rmdir(real(path))

    def rename(self, path, target):
        os.rename(real(path), real(target))

    def link(self, path, target):
        os.link(real(path), real(target))

    def symlink(self, target, path):
        os.symlink(target, real(path))

    def readlink(self, path):
        return os.readlink(real(path))

    def chmod(self, path, mode):
        os.chmod(real(path), mode)

    def chown(self, path, uid, gid):
        os.chown(real(path), uid, gid)

    def truncate(self, path, size):
        os.truncate(real(path), size)

    def mknod(self, path, mode, dev):
        os.mknod(real(path), mode, dev)

    def mkdir(self, path, mode):
        os.mkdir(real(path), mode)

    def utime(self, path, times):
        os.utime(real(path), times)

    def access(self, path, mode):
        if not os.access(real(path), mode):
            return -errno.EACCES

    def statfs(self):
        return os.statvfs(BACKING)

    def main(self, *args, **kwargs):
        class FaultyFile(object):
            def __init__(self, path, flags, *mode):
                self.path = path
                self.fd = os.open(real(path), flags, *mode)
                self.ino = os.fstat(self.fd).st_ino
                # SQLite maps its -shm file: that one keeps the page cache (mmap needs it, and
                # another open must not drop pages a connection has mapped).
                shm = path.endswith('-shm')
                self.direct_io = not shm
                self.keep_cache = shm

            def read(self, length, offset):
                if faulted(self.ino, offset, length):
                    return -errno.EIO
                return os.pread(self.fd, length, offset)

            def write(self, buf, offset):
                return os.pwrite(self.fd, buf, offset)

            def release(self, flags):
                os.close(self.fd)

            def fsync(self, datasync):
                if datasync:
                    os.fdatasync(self.fd)
                else:
                    os.fsync(self.fd)

            def flush(self):
                os.close(os.dup(self.fd))

            def fgetattr(self):
                return os.fstat(self.fd)

            def ftruncate(self, size):
                os.ftruncate(self.fd, size)

        self.file_class = FaultyFile
        return Fuse.main(self, *args, **kwargs)


def run():
    write_ack()
    server = FaultyFs(dash_s_do='setsingle')
    server.multithreaded = True
    server.fuse_args.mountpoint = MOUNTPOINT
    server.fuse_args.add('fsname=faulty')
    server.fuse_args.setmod('foreground')
    server.main()


if __name__ == '__main__':
    run()
