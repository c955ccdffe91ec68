import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, fetch } from 'undici';
import WebSocket from 'ws';
import type { BenchContext } from '../lib/context.js';
import { rssBytes, waitUntilIdle, withCpu } from '../lib/procs.js';
import { fmtNum, ratio } from '../lib/report.js';
import { medianBy } from '../lib/stats.js';
import { FAST_ALIAS } from '../lib/tollgate.js';

/** The bounds: an idle socket costs at most this much of the proxy's memory; a socket turn no more CPU than an HTTP one. */
export const IDLE_SOCKET_BYTES_TARGET = 64 * 1024;
export const TURN_CPU_RATIO_TARGET = 1;

const IDLE_SOCKETS = 1000;
/** Sockets (or HTTP connections) running turns at once, each turn after the one before, as Codex does per session. */
const SESSIONS = 10;

const createFrame = JSON.stringify({
  type: 'response.create',
  model: FAST_ALIAS,
  input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Say hello to the proxy.' }] }],
});

function open(url: string, key: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${key}` }, perMessageDeflate: false });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade answered ${res.statusCode}`)));
  });
}

/** One turn on a socket: the frame out, its events in, to the last. */
function socketTurn(ws: WebSocket): Promise<void> {
  return new Promise((resolve, reject) => {
    const onMessage = (data: Buffer) => {
      const text = data.toString();
      if (text.includes('"response.completed"') || text.startsWith('{"type":"error"')) {
        ws.off('message', onMessage);
        if (text.startsWith('{"type":"error"')) reject(new Error(text.slice(0, 300)));
        else resolve();
      }
    };
    ws.on('message', onMessage);
    ws.send(createFrame);
  });
}

async function socketTurns(url: string, key: string, turns: number): Promise<void> {
  const sockets = await Promise.all(Array.from({ length: SESSIONS }, () => open(url, key)));
  await Promise.all(
    sockets.map(async (ws) => {
      for (let i = 0; i < turns / SESSIONS; i++) await socketTurn(ws);
    }),
  );
  for (const ws of sockets) ws.close();
}

async function httpTurns(url: string, key: string, turns: number, dispatcher: Agent): Promise<void> {
  const body = JSON.stringify({ ...(JSON.parse(createFrame) as Record<string, unknown>), type: undefined, stream: true });
  await Promise.all(
    Array.from({ length: SESSIONS }, async () => {
      for (let i = 0; i < turns / SESSIONS; i++) {
        const res = await fetch(url, {
          method: 'POST',
          dispatcher,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body,
        });
        const text = await res.text();
        if (res.status !== 200 || !text.includes('response.completed')) throw new Error(`HTTP turn answered ${res.status}: ${text.slice(0, 300)}`);
      }
    }),
  );
}

/**
 * Codex's Responses WebSocket against the same turn over HTTP, on one
 * Tollgate: the proxy's resident memory for 1,000 idle sockets (each opened
 * with its key checked, then left alone), and the proxy's CPU per streamed
 * turn over a socket and over a keep-alive HTTP connection, in alternating
 * rounds (the median round each).
 */
export async function websocketScenario(ctx: BenchContext): Promise<void> {
  await ctx.upstream();
  const { tollgate, provisioned } = await ctx.tollgate();
  const pid = tollgate.proxy.pid;
  const slug = provisioned.org.workspace_slug;
  const wsUrl = `${tollgate.edgeUrl.replace(/^http/, 'ws')}/${slug}/v1/responses`;
  const httpUrl = `${tollgate.edgeUrl}/${slug}/v1/responses`;
  const dispatcher = new Agent({ connections: SESSIONS });

  // Warm both paths (JIT, key cache, pools) before anything is measured.
  await socketTurns(wsUrl, provisioned.key, 200);
  await httpTurns(httpUrl, provisioned.key, 200, dispatcher);

  await waitUntilIdle(pid);
  const rssBefore = rssBytes(pid);
  const idle: WebSocket[] = [];
  for (let i = 0; i < IDLE_SOCKETS; i += 50) idle.push(...(await Promise.all(Array.from({ length: 50 }, () => open(wsUrl, provisioned.key)))));
  await sleep(1000);
  await waitUntilIdle(pid);
  const perSocket = (rssBytes(pid) - rssBefore) / IDLE_SOCKETS;
  for (const ws of idle) ws.close();
  await sleep(500);

  const turns = ctx.profile.name === 'quick' ? 300 : 1000;
  const rounds = ctx.profile.name === 'quick' ? 2 : 5;
  const runs: { ws: number; http: number }[] = [];
  const cpuPerTurn = async (work: () => Promise<void>) => {
    await waitUntilIdle(pid);
    return (await withCpu({ proxy: pid }, work)).cpuUs.proxy! / turns;
  };
  for (let round = 0; round < rounds; round++) {
    // Each round starts with the other transport, so what one leaves behind (its settlements) does not land on one.
    const ws = () => cpuPerTurn(() => socketTurns(wsUrl, provisioned.key, turns));
    const http = () => cpuPerTurn(() => httpTurns(httpUrl, provisioned.key, turns, dispatcher));
    if (round % 2 === 0) runs.push({ ws: await ws(), http: await http() });
    else {
      const h = await http();
      runs.push({ ws: await ws(), http: h });
    }
    ctx.log(
      `websocket: round ${round + 1} of ${rounds}: ${fmtNum(runs.at(-1)!.ws)} µs per socket turn, ${fmtNum(runs.at(-1)!.http)} µs per HTTP turn`,
    );
  }
  await dispatcher.close();
  const median = medianBy(runs, (r) => r.ws / r.http)!;
  ctx.report.data.websocket = { idleSockets: IDLE_SOCKETS, rssBytesPerIdleSocket: perSocket, turns, runs, cpuRatio: median.ws / median.http };

  const table = ctx.report.section("Codex's Responses WebSocket against HTTP, one Tollgate", ['figure', 'value', 'target']);
  table.row(`proxy RSS per idle socket (${IDLE_SOCKETS} open)`, `${fmtNum(perSocket / 1024)} KiB`, `≤ ${IDLE_SOCKET_BYTES_TARGET / 1024} KiB`);
  table.row('proxy CPU per streamed turn, socket', `${fmtNum(median.ws)} µs`, '');
  table.row('proxy CPU per streamed turn, HTTP keep-alive', `${fmtNum(median.http)} µs`, '');
  table.row('socket ÷ HTTP', fmtNum(ratio(median.ws, median.http)), `≤ ${TURN_CPU_RATIO_TARGET}`);
  table.note(`${SESSIONS} sessions at once, ${turns} turns per transport per round, median of ${rounds} round(s).`);
}
