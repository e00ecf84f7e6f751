import { describe, expect, it } from 'vitest';
import { pageMeta, pageRequest, pageWindow } from '../../src/kernel/pagination.ts';

describe('page arithmetic (docs/api-reference.md#pagination)', () => {
  it.each([
    [0, 15, 1], [1, 15, 1], [15, 15, 1], [16, 15, 2], [30, 15, 2], [31, 15, 3], [96, 15, 7], [100, 100, 1], [101, 100, 2],
  ])('%i items at %i per page → last_page %i', (total, perPage, lastPage) => {
    expect(pageMeta(total, { page: 1, perPage })).toEqual({ current_page: 1, last_page: lastPage, per_page: perPage, total });
  });

  it('defaults to page 1 of 15 and skips whole pages', () => {
    expect(pageRequest({})).toEqual({ page: 1, perPage: 15 });
    expect(pageWindow(pageRequest({ page: 3, per_page: 20 }))).toEqual({ limit: 20, offset: 40 });
  });
});
