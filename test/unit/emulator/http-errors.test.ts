import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../packages/emulator/src/http/errors.js';
import { errorResult, internalErrorResult } from '../../../packages/emulator/src/http/server.js';

describe('failure bodies per interface', () => {
  it('A: result false with errcode, message and errors (always an array)', () => {
    expect(errorResult('A', new ApiError(404, 'Device not found: x', [{ field: 'device_id', message: 'not found' }])))
      .toEqual({ status: 200, body: { result: false, errcode: 404, message: 'Device not found: x', errors: [{ field: 'device_id', message: 'not found' }] } });
    expect(errorResult('A', new ApiError(401, 'Invalid access token')).body).toEqual({ result: false, errcode: 401, message: 'Invalid access token', errors: [] });
  });

  it('B: numeric result 0, errors only when there are any', () => {
    expect(errorResult('B', new ApiError(403, 'Invalid Project-Key')).body).toEqual({ result: 0, errcode: 403, message: 'Invalid Project-Key' });
  });

  it('a handler bug keeps the failure shape of its interface (HTTP 500 set by the server)', () => {
    expect(internalErrorResult('A').body).toEqual({ result: false, errcode: 500, message: 'Internal error', errors: [] });
    expect(internalErrorResult('B').body).toEqual({ result: 0, errcode: 500, message: 'Internal error' });
  });
});
