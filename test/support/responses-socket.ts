import WebSocket from 'ws';

/** A Responses WebSocket as Codex opens it: `GET {proxy}/{slug}/v1/responses` upgraded, the key as a Bearer token. */
export interface ResponsesSocket {
  ws: WebSocket;
  /** Sends one frame and collects the frames answering it, up to its last (`response.completed`, `response.failed`, `response.incomplete` or `error`). */
  turn(frame: Record<string, unknown>): Promise<Record<string, unknown>[]>;
  /** Resolves with the close code once the proxy closes the socket. */
  closed: Promise<{ code: number; reason: string }>;
}

/** The refusal of an upgrade: its status and body (no socket was opened). */
export interface RefusedUpgrade {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

const LAST = new Set(['response.completed', 'response.failed', 'response.incomplete', 'error']);

export function socketUrl(proxyUrl: string, slug: string): string {
  return `${proxyUrl.replace(/^http/, 'ws')}/${slug}/v1/responses`;
}

/** Opens a socket; a refused upgrade resolves with its answer instead. */
export function openResponsesSocket(proxyUrl: string, slug: string, key: string | undefined): Promise<ResponsesSocket | RefusedUpgrade> {
  const headers: Record<string, string> = { 'openai-beta': 'responses_websockets=2026-02-06' };
  if (key !== undefined) headers.authorization = `Bearer ${key}`;
  const ws = new WebSocket(socketUrl(proxyUrl, slug), { headers });
  return new Promise((resolve, reject) => {
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    ws.once('error', reject);
    ws.once('open', () => resolve(socketOf(ws)));
  });
}

function socketOf(ws: WebSocket): ResponsesSocket {
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  return {
    ws,
    closed,
    turn(frame) {
      return new Promise((resolve, reject) => {
        const got: Record<string, unknown>[] = [];
        const onMessage = (data: Buffer) => {
          const event = JSON.parse(data.toString()) as Record<string, unknown>;
          got.push(event);
          if (LAST.has(String(event.type))) {
            ws.off('message', onMessage);
            ws.off('close', onClose);
            resolve(got);
          }
        };
        const onClose = (code: number) => reject(new Error(`socket closed (${code}) after ${got.length} frames`));
        ws.on('message', onMessage);
        ws.once('close', onClose);
        ws.send(JSON.stringify(frame));
      });
    },
  };
}

/** A `response.create` frame for `model` with one user message. */
export function createFrame(model: string, text = 'Say hello to the proxy.', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'response.create', model, input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }], ...extra };
}

export function isSocket(s: ResponsesSocket | RefusedUpgrade): s is ResponsesSocket {
  return 'ws' in s;
}
