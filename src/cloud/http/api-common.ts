// What the interface A and B clients share: the rate queue they run on, URL joining and the
// check of a required string field in an answer.
import { CloudHttpError } from './errors.js';
import type { QueueTask } from './rate-queue.js';

/** What the interface A/B clients need of the rate queue (not the bus's RequestQueue). */
export interface CloudRequestQueue {
  run<T>(task: QueueTask<T>): Promise<T>;
}

export function joinUrl(baseUrl: string, path: string): string {
  return baseUrl.replace(/\/+$/, '') + path;
}

export function requireString(value: unknown, field: string, operation: string): string {
  if (typeof value !== 'string' || value === '') {
    throw new CloudHttpError(200, operation, `response field ${field} is missing or not a string`);
  }
  return value;
}
