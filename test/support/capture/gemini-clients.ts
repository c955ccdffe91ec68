import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FunctionCallingConfigMode, GoogleGenAI, type Content } from '@google/genai';
import { runProcess, WORKSPACE, type RunResult } from './clients.js';

// Google's clients against the capture server. The alias has a `/` in it, so
// the fixture shows whether the client escapes it in the path.

export const GEMINI_MODEL = 'capture/model';
const KEY = 'tg-capture-secret';

/** Where the Gemini CLI's headless run works (a file for its read_file tool). */
export function geminiWorkDir(tmp: string): string {
  return join(tmp, 'gemini-work');
}

/**
 * `gemini -p` with API-key auth chosen in a settings file of a temporary
 * HOME, `GEMINI_API_KEY` and `GOOGLE_GEMINI_BASE_URL` = the workspace's base.
 * Usage statistics and telemetry off: they go to Google, not the base URL.
 */
export function runGeminiCli(root: string, base: string, tmp: string, prompt: string): Promise<RunResult> {
  const work = geminiWorkDir(tmp);
  mkdirSync(join(tmp, '.gemini'), { recursive: true });
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'hello.txt'), 'hello\n');
  const settings = {
    security: { auth: { selectedType: 'gemini-api-key' } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
  };
  writeFileSync(join(tmp, '.gemini', 'settings.json'), JSON.stringify(settings));
  return runProcess(
    join(root, 'node_modules/.bin/gemini'),
    ['-p', prompt, '-m', GEMINI_MODEL],
    { HOME: tmp, GEMINI_API_KEY: KEY, GOOGLE_GEMINI_BASE_URL: `${base}/${WORKSPACE}`, GEMINI_CLI_TRUST_WORKSPACE: 'true' },
    work,
    120_000,
  );
}

const weather = {
  name: 'get_weather',
  description: 'The weather in a city.',
  parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

/** `@google/genai`: generateContent, generateContentStream, and a function-call round trip. */
export async function runGenai(base: string): Promise<void> {
  const ai = new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: `${base}/${WORKSPACE}` } });
  await ai.models.generateContent({ model: GEMINI_MODEL, contents: 'say hi' });
  for await (const chunk of await ai.models.generateContentStream({ model: GEMINI_MODEL, contents: 'say hi' })) void chunk;
  const config = { tools: [{ functionDeclarations: [weather] }], toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.AUTO } } };
  const asked: Content = { role: 'user', parts: [{ text: 'weather in Paris?' }] };
  const first = await ai.models.generateContent({ model: GEMINI_MODEL, contents: [asked], config });
  const call = first.functionCalls?.[0];
  if (call === undefined) return;
  const answered: Content[] = [
    asked,
    { role: 'model', parts: [{ functionCall: call }] },
    { role: 'user', parts: [{ functionResponse: { name: call.name ?? '', response: { output: 'sunny' } } }] },
  ];
  await ai.models.generateContent({ model: GEMINI_MODEL, contents: answered, config });
  await ai.models.countTokens({ model: GEMINI_MODEL, contents: 'say hi' });
}
