// A hostile MQTT sender on a raw socket: announces a packet and keeps writing until the peer
// closes the connection. For the emulator's packet size bounds (device broker and app side).
import { connect, type Socket } from 'node:net';
import mqttPacket from 'mqtt-packet';

/** The bytes of a fixed header's remaining length announcing the largest MQTT packet (256 MiB). */
export const HUGE_LENGTH = [0xff, 0xff, 0xff, 0x7f];

/** Stop writing here even if the peer never closes (the caller's test then fails on its deadline). */
export const FLOOD_CAP_BYTES = 64 * 1024 * 1024;

export function rawConnectPacket(username: string, password: string): Buffer {
  return mqttPacket.generate({
    cmd: 'connect', protocolId: 'MQTT', protocolVersion: 4, clean: true, keepalive: 0,
    clientId: `raw_${Math.random().toString(16).slice(2, 8)}`, username, password: Buffer.from(password),
  });
}

/** Writes `first`, then 16 KiB chunks until the peer closes the socket; resolves with the bytes written. */
export function floodUntilClosed(port: number, first: Buffer, sockets: Socket[]): Promise<number> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    sockets.push(socket);
    const chunk = Buffer.alloc(16 * 1024, 0x61);
    let written = 0;
    let closed = false;
    socket.on('error', () => undefined);
    socket.once('close', () => { closed = true; resolve(written); });
    const pump = (): void => {
      while (!closed && written < FLOOD_CAP_BYTES) {
        written += chunk.length;
        if (!socket.write(chunk)) {
          socket.once('drain', pump);
          return;
        }
      }
    };
    socket.once('connect', () => {
      socket.write(first);
      written += first.length;
      pump();
    });
  });
}
