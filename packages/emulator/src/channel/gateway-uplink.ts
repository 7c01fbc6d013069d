// What the cloud does with a gateway's `gateway/*` publish: check the payload, keep the gateway
// inside its own sub-devices, hand each sub-device's part to the state as if that device had
// sent it directly, and answer on the matching response topic.
import type { Logger } from 'fieldgate/workspace-kit';
import type { ChannelEvents, GatewayEvents } from '../channel.js';
import { addressOf, parseGatewayMessage, type GatewayMessage, type GatewayUplinkKind } from './gateway-topics.js';
import { BadRequest, type Answer } from './payload-shapes.js';

export const NOT_A_GATEWAY = 403;
export const NOT_BOUND = 404;
/** Addresses quoted in an error message (and its log line); the answer's `devices` lists all. */
const NAMED_IN_MESSAGE = 10;

/** A peer-chosen address as it may appear in a message or a log line (it can be ~1 MiB long). */
function shortened(addr: string): string {
  return addr.length > 64 ? `${addr.slice(0, 64)}...` : addr;
}

export class GatewayUplinks {
  constructor(
    private readonly events: ChannelEvents,
    private readonly gateways: GatewayEvents | undefined,
    private readonly now: () => number,
    private readonly log: Logger,
  ) {}

  answer(gatewayId: string, kind: GatewayUplinkKind, value: unknown, text: string): Answer {
    const addr = addressOf(value);
    try {
      if (this.gateways === undefined || !this.gateways.isGateway(gatewayId)) {
        return this.refuse(gatewayId, kind, NOT_A_GATEWAY, 'device is not a gateway', addr);
      }
      return this.dispatch(gatewayId, this.gateways, parseGatewayMessage(kind, value, text));
    } catch (err) {
      if (err instanceof BadRequest) return this.refuse(gatewayId, kind, 400, err.message, addr);
      this.log.error({ deviceId: gatewayId, kind, err }, 'gateway message handler failed');
      return { result: 0, errcode: 500, message: 'internal error' };
    }
  }

  private dispatch(gatewayId: string, gateways: GatewayEvents, message: GatewayMessage): Answer {
    if (message.kind === 'report') return this.report(gatewayId, gateways, message.entries);
    const subDeviceId = gateways.subDevice(gatewayId, message.addr);
    if (subDeviceId === undefined) return this.unbound(gatewayId, message.kind, [message.addr]);
    switch (message.kind) {
      case 'connect':
        gateways.onSubDeviceConnect(gatewayId, subDeviceId);
        return this.ok();
      case 'disconnect':
        gateways.onSubDeviceDisconnect(gatewayId, subDeviceId);
        return this.ok();
      case 'event':
        this.events.onEvent(subDeviceId, 'gateway', message.event);
        return this.ok();
      case 'attributesGet':
        return { device: message.addr, result: 1, attributes: this.events.onAttributesGet(subDeviceId, message.keys) };
      case 'commandReply':
        this.events.onCommandReply(subDeviceId, message.reply, String(message.reply.id));
        return this.ok();
    }
  }

  /** Every bound address is stored; unbound ones are dropped and named in the answer. */
  private report(gatewayId: string, gateways: GatewayEvents, entries: [string, Record<string, unknown>][]): Answer {
    const resolved = entries.map(([addr, attributes]) => ({ addr, attributes, subDeviceId: gateways.subDevice(gatewayId, addr) }));
    for (const { subDeviceId, attributes } of resolved) {
      if (subDeviceId !== undefined) this.events.onReport(subDeviceId, attributes);
    }
    const refused = resolved.filter((entry) => entry.subDeviceId === undefined).map((entry) => entry.addr);
    return refused.length === 0 ? this.ok() : this.unbound(gatewayId, 'report', refused);
  }

  private unbound(gatewayId: string, kind: GatewayUplinkKind, addrs: string[]): Answer {
    const named = addrs.slice(0, NAMED_IN_MESSAGE).map((a) => JSON.stringify(shortened(a)));
    const more = addrs.length > NAMED_IN_MESSAGE ? ` and ${addrs.length - NAMED_IN_MESSAGE} more` : '';
    const message = `sub-device address not bound to this gateway: ${named.join(', ')}${more}`;
    const answer = this.refuse(gatewayId, kind, NOT_BOUND, message, addrs[0]);
    return kind === 'report' ? { ...answer, devices: addrs } : answer;
  }

  private refuse(gatewayId: string, kind: GatewayUplinkKind, errcode: number, message: string, addr: string | undefined): Answer {
    const subDeviceAddr = addr === undefined ? undefined : shortened(addr);
    this.log.warn({ deviceId: gatewayId, kind, errcode, subDeviceAddr, reason: message }, 'gateway message refused');
    return addr === undefined ? { result: 0, errcode, message } : { result: 0, errcode, message, device: addr };
  }

  private ok(): Answer {
    return { result: 1, ts: this.now() };
  }
}
