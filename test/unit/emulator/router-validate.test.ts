import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../packages/emulator/src/http/errors.js';
import { Router, ok } from '../../../packages/emulator/src/http/router.js';
import { BodyReader, paginate, readKeys, readList, readPage } from '../../../packages/emulator/src/http/validate.js';

describe('Router', () => {
  const r = new Router<null>()
    .get('/api/v1/device/:device_id', () => ok('one'))
    .get('/api/v1/device/:device_id/attribute/:identifier/series', () => ok('series'))
    .add('POST', '/api/v1/access_token', () => ok('token'), { open: true });

  it.each([
    ['GET', '/api/v1/device/d%201', { device_id: 'd 1' }, false],
    ['GET', '/api/v1/device/d1/attribute/temp/series', { device_id: 'd1', identifier: 'temp' }, false],
    ['POST', '/api/v1/access_token', {}, true],
    ['GET', '/api/v1/device/d1/', { device_id: 'd1' }, false],
    ['POST', '/api/v1/access_token/', {}, true],
  ])('%s %s matches', (method, path, params, open) => {
    expect(r.match(method, path)).toMatchObject({ params, open });
  });

  it.each([['POST', '/api/v1/device/d1'], ['GET', '/api/v1/device'], ['GET', '/api/v1/device/d1/extra'], ['GET', '/api/v1/device/%E0%A4%A'],
    ['GET', '/api/v1/device/d1//'], ['GET', '/api/v1//device/d1'], ['GET', '/api/v1/device//attribute/temp/series'], ['GET', '/api/v1/device/']])(
    '%s %s does not match', (method, path) => expect(r.match(method, path)).toBeUndefined(),
  );
});

describe('BodyReader', () => {
  it('collects every field problem before failing', () => {
    const b = new BodyReader({ name: 3, groups: ['a', 1], tags: { a: 1 }, id: 1.5 });
    b.string('name', { required: true });
    b.string('account', { required: true });
    b.stringArray('groups');
    b.tags('tags');
    b.number('id', { integer: true });
    try {
      b.done();
      expect.unreachable();
    } catch (err) {
      expect((err as ApiError).errors.map((e) => e.field)).toEqual(['name', 'account', 'groups', 'tags.a', 'id']);
    }
  });

  it('treats null like an absent field in has() and the readers', () => {
    const b = new BodyReader({ name: null, descr: '' });
    expect(b.has('name')).toBe(false);
    expect(b.has('descr')).toBe(true);
    expect(b.string('name')).toBeUndefined();
    expect(() => b.done()).not.toThrow();
  });

  it('refuses a body that is not an object', () => {
    const b = new BodyReader('x');
    expect(() => b.done()).toThrow(ApiError);
  });
});

describe('paging and lists', () => {
  it('reads page bounds and defaults', () => {
    expect(readPage(new URLSearchParams(''), 100, 24)).toEqual({ page: 1, pageRecords: 24 });
    expect(readPage(new URLSearchParams('page=3&page_records=100'), 100, 24)).toEqual({ page: 3, pageRecords: 100 });
    expect(() => readPage(new URLSearchParams('page_records=1.5'), 100, 24)).toThrow(ApiError);
    expect(paginate([1, 2, 3, 4, 5], { page: 2, pageRecords: 2 })).toEqual({ items: [3, 4], total: 5, page_total: 3 });
    expect(paginate([], { page: 1, pageRecords: 2 })).toEqual({ items: [], total: 0, page_total: 0 });
  });

  it('splits comma lists; absent is undefined, empty is []', () => {
    expect(readList(new URLSearchParams('keys=a, b,,c'), 'keys')).toEqual(['a', 'b', 'c']);
    expect(readList(new URLSearchParams('keys='), 'keys')).toEqual([]);
    expect(readList(new URLSearchParams(''), 'keys')).toBeUndefined();
  });

  it('reads attribute keys: absent and empty both mean all', () => {
    expect(readKeys(new URLSearchParams('keys=a,b'))).toEqual(['a', 'b']);
    expect(readKeys(new URLSearchParams('keys='))).toBeUndefined();
    expect(readKeys(new URLSearchParams(''))).toBeUndefined();
  });
});
