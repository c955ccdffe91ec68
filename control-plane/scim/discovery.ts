import { LIST_RESPONSE_SCHEMA, USER_SCHEMA } from '../services/scim/resource.js';
import { MAX_PAGE_SIZE } from '../services/scim/users.js';

/**
 * RFC 7643 §5–7 documents describing exactly what this server does: User
 * only, PATCH yes, filter yes (the RFC 7644 grammar, on GET and POST
 * .search, at most MAX_PAGE_SIZE results a page), no bulk, sort, ETag or
 * password change, bearer-token authentication.
 */
const SPC_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig';
const RESOURCE_TYPE_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType';
const SCHEMA_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Schema';

export function serviceProviderConfig(base: string): Record<string, unknown> {
  return {
    schemas: [SPC_SCHEMA],
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_PAGE_SIZE },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'OAuth Bearer Token',
        description: "The organization's provisioning token from Settings → SCIM, as Authorization: Bearer <token>.",
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  };
}

export function userResourceType(base: string): Record<string, unknown> {
  return {
    schemas: [RESOURCE_TYPE_SCHEMA],
    id: 'User',
    name: 'User',
    endpoint: '/Users',
    description: 'A member of the organization',
    schema: USER_SCHEMA,
    schemaExtensions: [],
    meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/User` },
  };
}

interface Attribute {
  name: string;
  type: 'string' | 'boolean' | 'complex';
  multiValued: boolean;
  description: string;
  required: boolean;
  caseExact?: boolean;
  mutability: 'readOnly' | 'readWrite' | 'immutable';
  returned: 'always' | 'default';
  uniqueness: 'none' | 'server';
  subAttributes?: Attribute[];
}

const str = (name: string, description: string, extra: Partial<Attribute> = {}): Attribute => ({
  name,
  type: 'string',
  multiValued: false,
  description,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...extra,
});

const USER_ATTRIBUTES: Attribute[] = [
  str('userName', 'Unique within the organization (compared case-insensitively). Set at creation and never changed.', {
    required: true,
    mutability: 'immutable',
    returned: 'always',
    uniqueness: 'server',
  }),
  str('externalId', "The identity provider's stable id for the user; it links the SSO login.", { caseExact: true }),
  {
    name: 'name',
    type: 'complex',
    multiValued: false,
    description: "The user's name.",
    required: false,
    mutability: 'readWrite',
    returned: 'default',
    uniqueness: 'none',
    subAttributes: [
      str('givenName', 'Given name.'),
      str('familyName', 'Family name.'),
      str('formatted', 'The full name as the client sent it; when none was sent, givenName and familyName joined by a space.'),
    ],
  },
  str('displayName', 'Name for display.'),
  {
    name: 'active',
    type: 'boolean',
    multiValued: false,
    description: 'false deprovisions: the membership is revoked and console sessions end. Unassigned (removed) reads as true.',
    required: false,
    mutability: 'readWrite',
    returned: 'default',
    uniqueness: 'none',
  },
  {
    name: 'emails',
    type: 'complex',
    multiValued: true,
    description: 'Email addresses.',
    required: false,
    mutability: 'readWrite',
    returned: 'default',
    uniqueness: 'none',
    subAttributes: [
      str('value', 'The address.'),
      str('type', 'work, home, other, …'),
      {
        name: 'primary',
        type: 'boolean',
        multiValued: false,
        description: 'The preferred address.',
        required: false,
        mutability: 'readWrite',
        returned: 'default',
        uniqueness: 'none',
      },
    ],
  },
];

export function userSchema(base: string): Record<string, unknown> {
  return {
    schemas: [SCHEMA_SCHEMA],
    id: USER_SCHEMA,
    name: 'User',
    description: 'User account',
    attributes: USER_ATTRIBUTES,
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${USER_SCHEMA}` },
  };
}

export function listOf(resources: unknown[]): Record<string, unknown> {
  return { schemas: [LIST_RESPONSE_SCHEMA], totalResults: resources.length, startIndex: 1, itemsPerPage: resources.length, Resources: resources };
}
