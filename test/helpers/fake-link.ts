// A device link for forwarder unit tests: publishes wait for the test to resolve (PUBACK) or reject
// them; goDown rejects what is pending, as the real link does on a drop.
import type { ForwarderLink } from '../../src/cloud/forwarding/forwarder.js';
import { LinkDownError, type LinkEvent } from '../../src/cloud/mqtt/link.js';

export interface Pending {
  payload: string;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class FakeLink implements ForwarderLink {
  isUp = true;
  pending: Pending[] = [];
  sent: string[] = [];
  private listeners = new Set<(event: LinkEvent) => void>();
  publish(_topic: string, payload: Buffer): Promise<void> {
    if (!this.isUp) return Promise.reject(new LinkDownError('d'));
    this.sent.push(payload.toString());
    return new Promise((resolve, reject) => this.pending.push({ payload: payload.toString(), resolve, reject }));
  }
  onEvent(listener: (event: LinkEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  emit(event: LinkEvent): void {
    for (const l of this.listeners) l(event);
  }
  ackAll(): void {
    for (const p of this.pending.splice(0)) p.resolve();
  }
  goDown(): void {
    this.isUp = false;
    for (const p of this.pending.splice(0)) p.reject(new LinkDownError('d'));
    this.emit({ type: 'down', reason: 'test' });
  }
  goUp(): void {
    this.isUp = true;
    this.emit({ type: 'up' });
  }
}
