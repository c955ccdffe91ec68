import { invalidInput } from '../../shared/errors.js';
import { parseProjection, type Projection } from './attributes.js';
import type { ListQuery } from '../services/scim/users.js';
import { isObject, lowerKeys } from '../services/scim/values.js';

/**
 * A POST …/.search body (RFC 7644 §3.4.3): the query parameters of a GET
 * as JSON, so that a filter never lands in a URL or an access log.
 * `schemas` (…:api:messages:2.0:SearchRequest) is not required, as some
 * clients leave it out. Member names are case-insensitive; startIndex and count may be JSON
 * numbers or integer strings; sortBy/sortOrder are accepted and ignored
 * (sorting is not supported, as /ServiceProviderConfig says).
 */
export function parseSearchRequest(raw: unknown): { query: ListQuery; projection: Projection } {
  if (!isObject(raw)) throw invalidInput('The request body must be a JSON object (a SearchRequest).', 'invalidSyntax');
  const m = lowerKeys(raw);
  const text = (name: string): string | undefined => {
    const v = m.get(name.toLowerCase());
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'number' && name !== 'filter') return String(v);
    if (typeof v !== 'string')
      throw invalidInput(`"${name}" must be ${name === 'filter' ? 'a string' : 'an integer'}.`, name === 'filter' ? 'invalidFilter' : 'invalidValue');
    return v;
  };
  return {
    query: { filter: text('filter'), startIndex: text('startIndex'), count: text('count') },
    projection: parseProjection(m.get('attributes'), m.get('excludedattributes')),
  };
}
