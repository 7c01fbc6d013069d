// Online state per device and transport, reported exactly once per transition. A connection that
// replaces an older one of the same identity joins before the old one leaves, so a kick is not
// seen as offline-then-online.

export type Via = 'mqtt' | 'tcp';

export interface PresenceListener {
  onConnected(deviceId: string, via: Via): void;
  onDisconnected(deviceId: string, via: Via): void;
}

interface DeviceConnections {
  members: Set<object>;
  online: boolean;
}

export class Presence {
  private readonly devices = new Map<string, DeviceConnections>();

  constructor(
    private readonly via: Via,
    private readonly listener: PresenceListener,
  ) {}

  /** A connection proved this identity; it is not online until `ready`. */
  join(deviceId: string, connection: object): void {
    let entry = this.devices.get(deviceId);
    if (entry === undefined) {
      entry = { members: new Set(), online: false };
      this.devices.set(deviceId, entry);
    }
    entry.members.add(connection);
  }

  ready(deviceId: string, connection: object): void {
    const entry = this.devices.get(deviceId);
    if (entry === undefined || !entry.members.has(connection) || entry.online) return;
    entry.online = true;
    this.listener.onConnected(deviceId, this.via);
  }

  leave(deviceId: string, connection: object): void {
    const entry = this.devices.get(deviceId);
    if (entry === undefined || !entry.members.delete(connection)) return;
    if (entry.members.size > 0) return;
    this.devices.delete(deviceId);
    if (entry.online) this.listener.onDisconnected(deviceId, this.via);
  }

  isOnline(deviceId: string): boolean {
    return this.devices.get(deviceId)?.online ?? false;
  }
}
