// Errors raised by handlers; the server renders them per interface (A: result false, B: result 0).

/** errcode values chosen by the emulator where the spec shows none (see docs/emulator.md). */
export const ErrCode = {
  invalidJson: 400,
  badRequest: 400,
  invalidToken: 401,
  expiredToken: 401,
  wrongCredentials: 401,
  forbidden: 403,
  notFound: 404,
  conflict: 409,
  syncTimeout: 410,
  bodyTooLarge: 413,
  rateLimited: 429,
} as const;

export interface FieldError {
  field: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly errcode: number,
    message: string,
    readonly errors: FieldError[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** `label` names the thing for people, `field` names where the id came from. */
export function notFound(label: string, field: string, id: string): ApiError {
  return new ApiError(ErrCode.notFound, `${label} not found: ${id}`, [{ field, message: 'not found' }]);
}

export function invalidFields(errors: FieldError[]): ApiError {
  const first = errors[0];
  const summary = first ? `${first.field} ${first.message}` : 'invalid request';
  return new ApiError(ErrCode.badRequest, `Invalid parameters: ${summary}`, errors);
}

export function conflict(message: string, field: string): ApiError {
  return new ApiError(ErrCode.conflict, message, [{ field, message: 'already in use' }]);
}
