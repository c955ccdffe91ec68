import { expect } from 'chai';
import { request } from 'node:http';

/** The error a promise rejects with; fails the test if it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  expect.fail('expected the promise to reject');
}

/** Expected input tokens for a prompt of `chars` characters, per the documented formula. */
export function tokensFor(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

export function words(count: number): string {
  return Array.from({ length: count }, (_, i) => `tok${i + 1}`).join(' ');
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as the client's HTTP parser handed it over, one entry per 'data' event. */
  chunks: string[];
  text: string;
}

/** A plain node:http request, so tests see the wire without any SDK in between. */
export function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string | object,
): Promise<RawResponse> {
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, baseUrl), { method, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      const chunks: string[] = [];
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, chunks, text: chunks.join('') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** The `event:` names of an SSE body, in order. */
export function eventNames(text: string): string[] {
  return text
    .split('\n\n')
    .filter((f) => f !== '')
    .map((f) => /^event: (.*)$/m.exec(f)?.[1] ?? '');
}
