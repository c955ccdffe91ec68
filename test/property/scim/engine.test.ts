import { expect } from 'chai';
import fc from 'fast-check';
import { AppError } from '../../../shared/errors.js';
import { MAX_FILTER_LENGTH, parseFilter } from '../../../control-plane/services/scim/filter.js';
import { arbitraries, render } from './filter-model.js';
import { PATCH_PATH_SAMPLES } from '../../support/scim.js';
import { applyPatch } from '../../../control-plane/services/scim/patch.js';
import { parseUserBody, type MutableUser } from '../../../control-plane/services/scim/resource.js';
import { MAX_EMAILS, MAX_STRING } from '../../../control-plane/services/scim/values.js';

/**
 * The pure halves of SCIM — filter parsing, PATCH application, body
 * parsing — fuzzed in-process, many more runs than over HTTP: they either
 * answer or throw a 400 AppError with a scimType, and what they answer keeps
 * the invariants the database and connectors rely on.
 */
const RUNS = Number(process.env.SCIM_ENGINE_RUNS) || 2000;
const WELL_FORMED = /^(?:[^\ud800-\udfff]|[\ud800-\udbff][\udc00-\udfff])*$/;

function expectBadRequest(err: unknown, scimTypes: string[], what: string): void {
  expect(err, what).to.be.instanceOf(AppError);
  const e = err as AppError;
  expect(e.status, what).to.equal(400);
  expect(scimTypes, `${what}: ${e.code}`).to.include(e.code);
}

function expectStorable(s: string | null, what: string): void {
  if (s === null) return;
  expect(s.length, what).to.be.at.most(MAX_STRING);
  expect(s.includes('\u0000'), what).to.equal(false);
  expect(WELL_FORMED.test(s), what).to.equal(true);
}

function expectInvariants(u: MutableUser, what: string): void {
  for (const s of [u.external_id, u.given_name, u.family_name, u.display_name]) expectStorable(s, what);
  expect(u.active, what).to.be.a('boolean');
  expect(u.emails.length, what).to.be.at.most(MAX_EMAILS);
  expect(u.emails.filter((e) => e.primary === true).length, what).to.be.at.most(1);
  for (const e of u.emails) {
    expect(e.value.trim(), what).not.to.equal('');
    expectStorable(e.value, what);
    if (e.type !== undefined) expectStorable(e.type, what);
    if (e.primary !== undefined) expect(e.primary, what).to.be.a('boolean');
  }
}

const nasty = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom('\u0000', '\ud800', 'x\udfffy', '💥'.repeat(128), 'x'.repeat(257), '', ' ', 'True', 'false', 'work'),
);
const value = fc.oneof(nasty, fc.jsonValue({ maxDepth: 3 }), fc.boolean(), fc.constant(null));
const path = fc.oneof(fc.constantFrom(...PATCH_PATH_SAMPLES), nasty);
const op = fc.record(
  { op: fc.constantFrom('add', 'replace', 'remove', 'Replace', 'bogus'), path: fc.option(path, { nil: undefined }), value },
  { requiredKeys: ['op'] },
);
const start: MutableUser = {
  external_id: 'ext',
  given_name: 'G',
  family_name: 'F',
  name_formatted: null,
  display_name: 'D',
  emails: [
    { value: 'w@example.test', type: 'work', primary: true },
    { value: 'h@example.test', type: 'home' },
  ],
  active: true,
};

const CAPPED = /more than \d+ comparisons|compares emails more than \d+ times/;

describe('SCIM engine properties (in-process)', () => {
  it('applyPatch answers a user that keeps every invariant, or a 400 with a scimType, and never mutates its input', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 8 }), (ops) => {
        const before = JSON.stringify(start);
        const what = JSON.stringify(ops);
        try {
          expectInvariants(applyPatch(start, { Operations: ops }), what);
        } catch (err) {
          expectBadRequest(err, ['invalidSyntax', 'invalidPath', 'invalidValue', 'noTarget', 'mutability'], what);
        }
        expect(JSON.stringify(start), what).to.equal(before);
      }),
      { numRuns: RUNS },
    );
  });

  it('parseFilter accepts every expression of the supported grammar, however it is spelled, refusing only past the comparison caps', () => {
    const { expr, spelling } = arbitraries({
      texts: ['a', 'Ab@'],
      dates: ['2025-01-31T12:00:00.000Z'],
      ids: ['00000000-0000-4000-8000-000000000000'],
    });
    fc.assert(
      fc.property(expr, spelling, (x, s) => {
        const text = render(x, s);
        if (text.length > MAX_FILTER_LENGTH) return;
        try {
          parseFilter(text);
        } catch (err) {
          // The size caps (docs/scim.md, limits) are the one documented refusal of a well-formed filter.
          if (!(err instanceof Error) || !CAPPED.test(err.message)) throw err;
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('parseFilter answers a filter or a 400 invalidFilter for any text, never another error', () => {
    const word = fc.constantFrom(
      'userName',
      'emails',
      'emails.value',
      'name.givenName',
      'meta.created',
      'active',
      'id',
      'title',
      'eq',
      'Ne',
      'co',
      'pr',
      'gt',
      'and',
      'OR',
      'not',
      'true',
      'null',
      '42',
      '[',
      ']',
      '(',
      ')',
      '.value',
      '"x"',
      '"2025-01-01T00:00:00Z"',
      '"',
      '\\',
      'urn:ietf:params:scim:schemas:core:2.0:User:userName',
    );
    const text = fc.oneof(
      fc.array(word, { maxLength: 12 }).map((w) => w.join(' ')),
      nasty,
      fc.string({ unit: 'binary', maxLength: 60 }),
    );
    fc.assert(
      fc.property(text, (t) => {
        try {
          parseFilter(t);
        } catch (err) {
          expectBadRequest(err, ['invalidFilter'], t);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('parseUserBody answers storable attributes or a 400 invalidSyntax/invalidValue', () => {
    const body = fc.oneof(
      fc.record(
        {
          userName: value,
          externalId: value,
          active: value,
          displayName: value,
          name: fc.oneof(value, fc.record({ givenName: value, familyName: value }, { requiredKeys: [] })),
          emails: fc.oneof(value, fc.array(fc.record({ value, type: value, primary: value }, { requiredKeys: [] }), { maxLength: 22 })),
        },
        { requiredKeys: [] },
      ),
      fc.jsonValue({ maxDepth: 3 }),
    );
    fc.assert(
      fc.property(body, (raw) => {
        const what = JSON.stringify(raw);
        try {
          const u = parseUserBody(raw);
          if (u.userName !== undefined) expectStorable(u.userName, what);
          expectInvariants(
            {
              external_id: u.externalId ?? null,
              given_name: u.givenName,
              family_name: u.familyName,
              name_formatted: u.formatted,
              display_name: u.displayName,
              emails: u.emails,
              active: u.active ?? true,
            },
            what,
          );
        } catch (err) {
          expectBadRequest(err, ['invalidSyntax', 'invalidValue'], what);
        }
      }),
      { numRuns: RUNS },
    );
  });
});
