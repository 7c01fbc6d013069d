// What the cloud does with a device's publish: hand it to the state (ChannelEvents) and answer
// on the response topic with the decided shapes of docs/protocol.md §3.
import type { Logger } from 'fieldgate/workspace-kit';
import type { ChannelEvents, GatewayEvents } from '../channel.js';
import { DEFAULT_JSON_LIMITS, parseBoundedJson, type BoundedJson, type JsonLimits } from '../json-limits.js';
import { GatewayUplinks } from './gateway-uplink.js';
import { BadRequest, commandReply, type Answer, reportAttributes, requestedKeys, requireMethod, requireObject } from './payload-shapes.js';
import { responseTopic, type UplinkTopic } from './scoping.js';

/** A non-JSON payload on a JSON topic drops the connection, as the real cloud may do. */
export type UplinkOutcome = { action: 'accept' } | { action: 'disconnect'; reason: string };

export type SendReply = (deviceId: string, topic: string, payload: Buffer) => void;

export class UplinkHandler {
  private readonly gatewayUplinks: GatewayUplinks;

  constructor(
    private readonly events: ChannelEvents,
    private readonly sendReply: SendReply,
    private readonly now: () => number,
    private readonly log: Logger,
    private readonly limits: JsonLimits = DEFAULT_JSON_LIMITS,
    gateways?: GatewayEvents,
  ) {
    this.gatewayUplinks = new GatewayUplinks(events, gateways, now, log);
  }

  handle(deviceId: string, uplink: UplinkTopic, payload: Buffer): UplinkOutcome {
    if (uplink.kind === 'streamData') {
      this.callSafely(deviceId, () => this.events.onStreamData(deviceId, uplink.identifier, payload));
      return { action: 'accept' };
    }
    // `{}` is the documented "all attributes" request; an empty payload means the same.
    const text = payload.toString('utf8');
    const parsed: BoundedJson = uplink.kind === 'attributesGet' && payload.length === 0
      ? { ok: true, value: {} }
      : parseBoundedJson(text, payload.length, this.limits);
    let answer: Answer;
    if (parsed.ok && uplink.kind === 'gateway') answer = this.gatewayUplinks.answer(deviceId, uplink.message, parsed.value, text);
    else if (parsed.ok) answer = this.answer(deviceId, uplink, parsed.value);
    else if (parsed.problem === 'syntax') return { action: 'disconnect', reason: 'non-JSON payload on a JSON topic' };
    // Valid JSON beyond the bounds is refused like a wrong shape: answered, nothing stored.
    else answer = this.refuse(deviceId, uplink, parsed.problem, parsed.message);
    const topic = responseTopic(uplink);
    if (topic !== undefined) this.sendReply(deviceId, topic, this.encode(deviceId, answer));
    return { action: 'accept' };
  }

  private encode(deviceId: string, answer: Answer): Buffer {
    try {
      return Buffer.from(JSON.stringify(answer));
    } catch (err) {
      // e.g. a circular or BigInt value from the state
      this.log.error({ deviceId, err }, 'device answer not serialisable');
      return Buffer.from(JSON.stringify({ result: 0, errcode: 500, message: 'internal error' }));
    }
  }

  private answer(deviceId: string, uplink: UplinkTopic, value: unknown): Answer {
    try {
      switch (uplink.kind) {
        case 'report':
          this.events.onReport(deviceId, reportAttributes(value));
          return this.ok();
        case 'attributesGet':
          return { result: 1, attributes: this.events.onAttributesGet(deviceId, requestedKeys(value)) };
        case 'commandReply':
          this.events.onCommandReply(deviceId, commandReply(value, uplink.requestId), uplink.requestId);
          return this.ok();
        case 'event': {
          const body = requireObject(value, 'an event');
          this.events.onEvent(deviceId, uplink.requestId, { method: requireMethod(body), params: body.params ?? {} });
          return this.ok();
        }
        case 'streamData':
        case 'gateway':
          return this.ok();
      }
    } catch (err) {
      if (err instanceof BadRequest) {
        this.log.warn({ deviceId, kind: uplink.kind, reason: err.message }, 'device message refused');
        return { result: 0, errcode: 400, message: err.message };
      }
      this.log.error({ deviceId, kind: uplink.kind, err }, 'device message handler failed');
      return { result: 0, errcode: 500, message: 'internal error' };
    }
  }

  private refuse(deviceId: string, uplink: UplinkTopic, problem: 'depth' | 'size', message: string): Answer {
    this.log.warn({ deviceId, kind: uplink.kind, reason: message }, 'device message refused');
    return { result: 0, errcode: problem === 'size' ? 413 : 400, message };
  }

  private ok(): Answer {
    return { result: 1, ts: this.now() };
  }

  private callSafely(deviceId: string, call: () => void): void {
    try {
      call();
    } catch (err) {
      this.log.error({ deviceId, err }, 'device stream handler failed');
    }
  }
}
