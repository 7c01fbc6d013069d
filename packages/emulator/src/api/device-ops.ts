// Device communication shared by A7 and interface B: command bodies and custom data pushes.
import type { CommandMessage } from '../channel.js';
import type { DeviceLink } from '../device-link.js';
import { ApiError, ErrCode, invalidFields, notFound } from '../http/errors.js';
import { BodyReader, isPlainObject } from '../http/validate.js';
import type { DeviceRecord } from '../state/model.js';
import type { EmulatorState } from '../state/state.js';
import { encodeStreamMessage } from '../stream-framing.js';

/** Interface B: command id is an integer of at most 6 digits. */
export const MAX_COMMAND_ID = 999_999;

export const SUB_DEVICE_NO_STREAMS = 'sub-device has no custom data channel';

let generatedId = 0;

/** `{method, params, id}`; B requires the id, A7 numbers it when absent. */
export function readCommand(body: unknown, idRequired: boolean): CommandMessage {
  const reader = new BodyReader(body);
  const method = reader.string('method', { required: true });
  const params = reader.object('params');
  const id = reader.number('id', idRequired ? { required: true, integer: true, min: 0, max: MAX_COMMAND_ID } : { integer: true, min: 0 });
  reader.done();
  generatedId = (generatedId % MAX_COMMAND_ID) + 1;
  return { method: method ?? '', params: params ?? {}, id: id ?? generatedId };
}

export function readPushMode(query: URLSearchParams, fallback: 'mqtt' | undefined): 'mqtt' | 'tcp' {
  // `MQTT` / `Tcp` are the same modes; an empty value is no value.
  const raw = query.get('push_mode')?.trim().toLowerCase() || fallback;
  if (raw === undefined) throw invalidFields([{ field: 'push_mode', message: 'is required (mqtt or tcp)' }]);
  if (raw !== 'mqtt' && raw !== 'tcp') throw invalidFields([{ field: 'push_mode', message: 'must be mqtt or tcp' }]);
  return raw;
}

/** Validates the stream and the body, then hands the raw bytes to the channel. */
export async function pushStreamData(
  state: EmulatorState, link: DeviceLink, device: DeviceRecord, identifier: string, mode: 'mqtt' | 'tcp', body: unknown,
): Promise<void> {
  // docs/protocol.md §3, gateway mode: custom data streams stay per device; a sub-device has none.
  if (state.kindOf(device) === 'sub_device') {
    throw new ApiError(ErrCode.badRequest, SUB_DEVICE_NO_STREAMS, [{ field: 'device', message: SUB_DEVICE_NO_STREAMS }]);
  }
  const type = state.types.get(device.type);
  if (!type?.data_streams.some((s) => s.identifier === identifier)) throw notFound('Custom data stream', 'identifier', identifier);
  if (!isPlainObject(body)) throw invalidFields([{ field: '(body)', message: 'must be a JSON object with type and msg' }]);
  const bytes = encodeStreamMessage(body.type, body.msg);
  await link.pushStream(device.id, identifier, mode, bytes);
}
