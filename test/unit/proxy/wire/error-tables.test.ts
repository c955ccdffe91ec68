import { expect } from 'chai';
import { statusOf, type ErrorKind } from '../../../../shared/errors.js';
import { chatErrorBody } from '../../../../proxy/wire/chat/errors.js';
import { messagesErrorBody } from '../../../../proxy/wire/messages/errors.js';
import { openaiErrorType } from '../../../../proxy/wire/responses/errors.js';
import { anthropicError, openaiError } from '../../../support/fake-upstream/errors.js';

const KINDS: Record<ErrorKind, true> = {
  invalid_input: true,
  unauthenticated: true,
  forbidden: true,
  not_found: true,
  conflict: true,
  too_large: true,
  rate_limited: true,
  insufficient_funds: true,
  upstream_unreachable: true,
  upstream_timeout: true,
  unavailable: true,
  internal: true,
};
const kinds = Object.keys(KINDS) as ErrorKind[];

interface OpenAIError {
  type: string;
  code: string | null;
}
const chat = (kind: ErrorKind) => (JSON.parse(chatErrorBody(kind, 'm')) as { error: OpenAIError }).error;
const messagesType = (kind: ErrorKind) => (JSON.parse(messagesErrorBody(kind, 'm')) as { error: { type: string } }).error.type;
const fakeOpenAI = (status: number) => (JSON.parse(openaiError(status)) as { error: OpenAIError }).error;
const fakeAnthropicType = (status: number) => (JSON.parse(anthropicError(status)) as { error: { type: string } }).error.type;

/**
 * Where the fake provider answers as the real provider documents and the
 * proxy's own answer for that status is another type. Both are types the
 * SDKs map by status, so a client handles either the same way.
 */
const OPENAI_APART: Partial<Record<number, string>> = {
  // OpenAI says `server_error` for its 5xx; the proxy's own 5xx say `api_error`.
  500: 'server_error',
  502: 'server_error',
  503: 'server_error',
  504: 'server_error',
};
const ANTHROPIC_APART: Partial<Record<number, string>> = {
  // Anthropic documents `timeout_error` for its 504; the proxy's own timeout says `api_error`.
  504: 'timeout_error',
};

describe("proxy: the error tables agree (the proxy's own, and the fake provider's)", () => {
  it("gives a Chat and a Responses client the same OpenAI type for each outcome's status", () => {
    for (const kind of kinds) expect(openaiErrorType(statusOf(kind)), kind).to.equal(chat(kind).type);
  });

  it("has the fake OpenAI answer each status the proxy answers with the proxy's type and default code", () => {
    for (const kind of kinds) {
      const status = statusOf(kind);
      const fake = fakeOpenAI(status);
      expect(fake.type, `${kind} (${status})`).to.equal(OPENAI_APART[status] ?? chat(kind).type);
      if (chat(kind).code !== null) expect(fake.code, `${kind} (${status}) code`).to.equal(chat(kind).code);
    }
  });

  it("has the fake Anthropic answer each status the proxy answers with the proxy's type", () => {
    for (const kind of kinds) {
      const status = statusOf(kind);
      expect(fakeAnthropicType(status), `${kind} (${status})`).to.equal(ANTHROPIC_APART[status] ?? messagesType(kind));
    }
  });

  it('keeps the exceptions to real differences (an entry the tables came to agree on is removed)', () => {
    for (const [status, type] of Object.entries(OPENAI_APART)) {
      const kind = kinds.find((k) => statusOf(k) === Number(status))!;
      expect(chat(kind).type, status).not.to.equal(type);
    }
    for (const [status, type] of Object.entries(ANTHROPIC_APART)) {
      const kind = kinds.find((k) => statusOf(k) === Number(status))!;
      expect(messagesType(kind), status).not.to.equal(type);
    }
  });
});
