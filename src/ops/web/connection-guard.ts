// The page's connections, bounded so that half-open ones cannot block it: at most `max` in all and
// `perAddress` from one client address. At either bound a new connection takes the place of the
// oldest idle one (headers not yet sent, or a kept-alive connection between requests; from the
// address with the most connections), and is refused only when every connection is busy with a
// request (the live pages' streams are bounded by maxEventClients). 336 sockets sending their
// headers a byte at a time held the page for 21 s before; now they only evict each other.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

interface Tracked {
  address: string;
  /** A request is being answered on it. */
  busy: boolean;
}

export class ConnectionGuard {
  /** Insertion order is age order: the oldest first. */
  private readonly sockets = new Map<Socket, Tracked>();
  private readonly perAddressCount = new Map<string, number>();
  evicted = 0;
  refused = 0;

  constructor(private readonly max: number, private readonly perAddress: number) {}

  /** Watches `server`'s connections (`connectionEvent`: 'secureConnection' over TLS, where requests run on the TLS socket). */
  attach(server: Server, connectionEvent: 'connection' | 'secureConnection'): void {
    server.on(connectionEvent, (socket: Socket) => this.admit(socket));
    server.on('request', (req, res) => {
      const tracked = this.sockets.get(req.socket);
      if (!tracked) return;
      tracked.busy = true;
      res.once('close', () => {
        tracked.busy = false;
      });
    });
  }

  get size(): number {
    return this.sockets.size;
  }

  private admit(socket: Socket): void {
    const address = socket.remoteAddress ?? 'unknown';
    if ((this.perAddressCount.get(address) ?? 0) >= this.perAddress && !this.evictIdle(address)) return this.refuse(socket);
    if (this.sockets.size >= this.max && !this.evictIdle(undefined)) return this.refuse(socket);
    this.sockets.set(socket, { address, busy: false });
    this.perAddressCount.set(address, (this.perAddressCount.get(address) ?? 0) + 1);
    socket.once('close', () => {
      if (!this.sockets.delete(socket)) return;
      const left = (this.perAddressCount.get(address) ?? 1) - 1;
      if (left > 0) this.perAddressCount.set(address, left);
      else this.perAddressCount.delete(address);
    });
  }

  private refuse(socket: Socket): void {
    this.refused++;
    socket.destroy();
  }

  /** Closes the oldest idle connection of `address` (or, without one, of the address with the most); false when none is idle. */
  private evictIdle(address: string | undefined): boolean {
    const from = address ?? this.busiestAddress();
    for (const [socket, tracked] of this.sockets) {
      if (tracked.busy || tracked.address !== from) continue;
      this.forget(socket, tracked);
      this.evicted++;
      socket.destroy();
      return true;
    }
    if (address !== undefined) return false;
    // The busiest address has none idle, so an idle connection of another address goes.
    for (const [socket, tracked] of this.sockets) {
      if (tracked.busy) continue;
      this.forget(socket, tracked);
      this.evicted++;
      socket.destroy();
      return true;
    }
    return false;
  }

  /** Out of the counts at once: the socket's 'close' comes later, the new connection must fit now. */
  private forget(socket: Socket, tracked: Tracked): void {
    this.sockets.delete(socket);
    const left = (this.perAddressCount.get(tracked.address) ?? 1) - 1;
    if (left > 0) this.perAddressCount.set(tracked.address, left);
    else this.perAddressCount.delete(tracked.address);
  }

  private busiestAddress(): string | undefined {
    let most: string | undefined;
    let count = 0;
    for (const [address, n] of this.perAddressCount) {
      if (n > count) {
        most = address;
        count = n;
      }
    }
    return most;
  }
}

/** One address's share of the connections: a quarter, and never fewer than the live pages' streams and some loads. */
export function connectionsPerAddress(maxConnections: number, maxEventClients: number): number {
  return Math.min(maxConnections, Math.max(maxEventClients + 16, Math.floor(maxConnections / 4)));
}
