// fieldgate's own identity over its MQTT link (device-channel.md section 2): own attributes on
// `attributes`, commands from `command/send/<id>` answered on `command/reply/<id>`. The own
// identity has no writable attributes and no data streams: pushes to it are logged and dropped.
import type { CommandOutcome } from '../../core/device-write-types.js';
import { COMMAND_ERRORS, describeError } from '../../core/device-write-types.js';
import type { SelfChannel, SelfCommandHandler } from '../../core/self-channel.js';
import type { Logger } from '../../core/logger.js';
import type { MqttLink } from './link.js';
import { TOPIC, attributesReport, commandReply, parseInbound, type ReportValue } from './topics.js';

/** What the identity's link subscribes to for the own device (besides gateway/* in gateway mode). */
export const SELF_SUBSCRIPTIONS: readonly string[] = [TOPIC.commandSend, TOPIC.attributesPush];

/** The own device's topics; anything else on the link (gateway/*) is another reader's. */
function isOwnDeviceTopic(topic: string): boolean {
  return topic.startsWith('command/send/') || topic === TOPIC.attributesPush;
}

export interface SelfChannelLimits {
  maxInboundBytes: number;
  maxKeys: number;
}

export class MqttSelfChannel implements SelfChannel {
  private handler: SelfCommandHandler | undefined;

  constructor(
    private readonly link: Pick<MqttLink, 'publish' | 'onMessage' | 'onEvent'>,
    private readonly limits: SelfChannelLimits,
    private readonly log: Logger,
  ) {
    link.onMessage((topic, payload) => this.receive(topic, payload));
  }

  reportAttributes(attributes: Readonly<Record<string, unknown>>): Promise<void> {
    return this.link.publish(TOPIC.attributes, attributesReport(attributes as Readonly<Record<string, ReportValue>>));
  }

  onCommand(handler: SelfCommandHandler): void {
    this.handler = handler;
  }

  onUp(listener: () => void): void {
    this.link.onEvent((event) => {
      if (event.type === 'up') listener();
    });
  }

  private receive(topic: string, payload: Buffer): void {
    if (!isOwnDeviceTopic(topic)) return;
    const inbound = parseInbound(topic, payload, { streams: [], maxPayloadBytes: this.limits.maxInboundBytes, maxKeys: this.limits.maxKeys });
    switch (inbound.kind) {
      case 'command': {
        const { id, method, params } = inbound;
        const handler = this.handler;
        const work = handler ? handler({ id, method, params }) : Promise.resolve(notReady());
        void work
          .catch((err: unknown): CommandOutcome => ({ ok: false, error: { code: COMMAND_ERRORS.internal, message: describeError(err) } }))
          .then((outcome) => this.reply(inbound, outcome));
        return;
      }
      case 'invalid':
        this.log.warn({ topic: inbound.topic, reason: inbound.reason }, 'invalid inbound message on own identity');
        if (inbound.command) this.reply(inbound.command, { ok: false, error: { code: COMMAND_ERRORS.badParams, message: inbound.reason } });
        return;
      case 'attributes-push':
        this.log.warn({ keys: Object.keys(inbound.attributes).length }, 'attribute push to own identity ignored');
        return;
      default:
        return;
    }
  }

  private reply(command: { id: number; method: string }, outcome: CommandOutcome): void {
    const message = commandReply(command, outcome.ok ? { params: outcome.result } : { error: outcome.error });
    this.link.publish(message.topic, message.payload).catch((err: unknown) => this.log.warn({ id: command.id, err }, 'own command reply not delivered'));
  }
}

function notReady(): CommandOutcome {
  return { ok: false, error: { code: COMMAND_ERRORS.busy, message: 'gateway starting: commands are not taken yet' } };
}
