// A stdio MCP server with one tool, `echo`, for driving Codex's MCP namespace
// tools in captures and tests: newline-delimited JSON-RPC, nothing else.
import { createInterface } from 'node:readline';

const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
const TOOL = {
  name: 'echo',
  description: 'Echoes its text back.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
};

createInterface({ input: process.stdin }).on('line', (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (msg.id === undefined) return;
  if (msg.method === 'initialize')
    send({
      id: msg.id,
      result: {
        protocolVersion: msg.params?.protocolVersion ?? '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'echo', version: '1.0.0' },
      },
    });
  else if (msg.method === 'tools/list') send({ id: msg.id, result: { tools: [TOOL] } });
  else if (msg.method === 'tools/call')
    send({ id: msg.id, result: { content: [{ type: 'text', text: `echo: ${msg.params?.arguments?.text ?? ''}` }] } });
  else send({ id: msg.id, error: { code: -32601, message: `no method ${msg.method}` } });
});
