/** Responses request bodies shaped like the ones real clients send, for the format's and the translation's tests. */

/** A Codex CLI turn: namespaced MCP tools, a free-form patch tool, tool search, reasoning from the previous turn. */
export function codexRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: 'tg/gpt-direct',
    instructions: 'You are a coding agent.',
    input: [
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Sandbox: workspace-write.' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'List the files.' }] },
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA-opaque' },
      { type: 'function_call', call_id: 'call_1', name: 'shell', arguments: '{"command":["ls"]}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'README.md' },
      { type: 'function_call', call_id: 'call_2', name: 'read', namespace: 'mcp__files__', arguments: '{"path":"README.md"}' },
      { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: '# Hello' }] },
      { type: 'custom_tool_call', call_id: 'call_3', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch' },
      { type: 'custom_tool_call_output', call_id: 'call_3', output: 'Done!' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'There is a README.' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Thanks.' }] },
    ],
    tools: [
      {
        type: 'function',
        name: 'shell',
        description: 'Runs a command.',
        strict: false,
        parameters: { type: 'object', properties: { command: { type: 'array', items: { type: 'string' } } }, required: ['command'] },
      },
      {
        type: 'custom',
        name: 'apply_patch',
        description: 'Applies a patch.',
        format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/' },
      },
      {
        type: 'namespace',
        name: 'mcp__files__',
        description: 'A file server.',
        tools: [
          { type: 'function', name: 'read', description: 'Reads a file.', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
        ],
      },
      { type: 'web_search', external_web_access: false },
      { type: 'tool_search', execution: 'client' },
    ],
    tool_choice: 'auto',
    parallel_tool_calls: false,
    reasoning: { effort: 'medium', summary: 'auto' },
    store: false,
    stream: true,
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: '0199-session',
    client_metadata: { originator: 'codex_exec' },
    text: { verbosity: 'low' },
    ...overrides,
  };
}
