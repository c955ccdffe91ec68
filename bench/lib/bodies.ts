/** Request bodies of about 1 KB, as an SDK sends them. */

const FILLER =
  'You are reviewing a pull request. Summarise the change, point out risky edits, and suggest tests that would catch a regression. ' +
  'The diff touches the request router, the configuration loader and two storage queries; keep the answer short and concrete. ';

function padTo(bytes: number, build: (text: string) => string): string {
  let text = '';
  while (build(text).length < bytes) text += FILLER;
  let body = build(text);
  while (body.length > bytes && text.length > 0) {
    text = text.slice(0, -1);
    body = build(text);
  }
  return body;
}

export const BODY_BYTES = 1024;

export function chatBody(model: string, options: { stream?: boolean } = {}): string {
  return padTo(BODY_BYTES, (text) =>
    JSON.stringify({
      model,
      messages: [
        { role: 'system', content: 'You are a careful senior engineer.' },
        { role: 'user', content: text },
      ],
      max_tokens: 256,
      ...(options.stream ? { stream: true } : {}),
    }),
  );
}

export function messagesBody(model: string, options: { stream?: boolean } = {}): string {
  return padTo(BODY_BYTES, (text) =>
    JSON.stringify({
      model,
      max_tokens: 256,
      system: 'You are a careful senior engineer.',
      messages: [{ role: 'user', content: text }],
      ...(options.stream ? { stream: true } : {}),
    }),
  );
}

export function responsesBody(model: string, options: { stream?: boolean } = {}): string {
  return padTo(BODY_BYTES, (text) =>
    JSON.stringify({
      model,
      instructions: 'You are a careful senior engineer.',
      input: [{ role: 'user', content: [{ type: 'input_text', text }] }],
      max_output_tokens: 256,
      ...(options.stream ? { stream: true } : {}),
    }),
  );
}

export const ANTHROPIC_VERSION = '2023-06-01';
