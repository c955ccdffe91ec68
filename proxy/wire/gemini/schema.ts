import { z } from 'zod';
import { checkSchema } from '../schema-check.js';

/**
 * What a Gemini `generateContent` request may hold, checked field by field.
 * Well-formed fields this schema does not know pass through (a translation
 * names them as dropped); a malformed one is refused with a message naming
 * it, e.g. `contents[1].parts[0].functionCall.name: expected a string`.
 */

const Blob = z.looseObject({ mimeType: z.string(), data: z.string() });
const FileData = z.looseObject({ mimeType: z.string().optional(), fileUri: z.string() });
const FunctionCall = z.looseObject({ id: z.string().optional(), name: z.string(), args: z.record(z.string(), z.unknown()).optional() });
const FunctionResponse = z.looseObject({
  id: z.string().optional(),
  name: z.string(),
  response: z.record(z.string(), z.unknown()).optional(),
});

/** One part: exactly one of its data fields is expected, but which is read is the translation's business. */
export const Part = z.looseObject({
  text: z.string().optional(),
  thought: z.boolean().optional(),
  thoughtSignature: z.string().optional(),
  inlineData: Blob.optional(),
  fileData: FileData.optional(),
  functionCall: FunctionCall.optional(),
  functionResponse: FunctionResponse.optional(),
});

export const Content = z.looseObject({
  role: z.string().optional(),
  parts: z.array(Part),
});

export const FunctionDeclaration = z.looseObject({
  name: z.string().min(1),
  description: z.string().optional(),
  parameters: z.record(z.string(), z.unknown()).optional(),
  parametersJsonSchema: z.unknown().optional(),
});

export const Tool = z.looseObject({ functionDeclarations: z.array(FunctionDeclaration).optional() });

export const ToolConfig = z.looseObject({
  functionCallingConfig: z
    .looseObject({
      mode: z.enum(['MODE_UNSPECIFIED', 'AUTO', 'ANY', 'NONE', 'VALIDATED']).optional(),
      allowedFunctionNames: z.array(z.string()).optional(),
    })
    .optional(),
});

export const ThinkingConfig = z.looseObject({
  includeThoughts: z.boolean().optional(),
  thinkingBudget: z.number().int().optional(),
  thinkingLevel: z.string().optional(),
});

export const GenerationConfig = z.looseObject({
  temperature: z.number().optional(),
  topP: z.number().optional(),
  topK: z.number().optional(),
  candidateCount: z.number().int().min(1).optional(),
  maxOutputTokens: z.number().int().min(1).optional(),
  stopSequences: z.array(z.string()).optional(),
  presencePenalty: z.number().optional(),
  frequencyPenalty: z.number().optional(),
  seed: z.number().int().optional(),
  responseMimeType: z.string().optional(),
  responseSchema: z.record(z.string(), z.unknown()).optional(),
  responseJsonSchema: z.unknown().optional(),
  thinkingConfig: ThinkingConfig.optional(),
});

export const GeminiRequestSchema = z.looseObject({
  contents: z.array(Content),
  systemInstruction: Content.optional(),
  tools: z.array(Tool).optional(),
  toolConfig: ToolConfig.optional(),
  generationConfig: GenerationConfig.optional(),
  safetySettings: z.array(z.looseObject({ category: z.string(), threshold: z.string() })).optional(),
  cachedContent: z.string().optional(),
});

export type GeminiPart = z.infer<typeof Part>;
export type GeminiContent = z.infer<typeof Content>;
export type GeminiRequest = z.infer<typeof GeminiRequestSchema>;

/**
 * The client's body → a checked Gemini request. Throws an `invalid_input`
 * AppError (a 400 in Google's error shape) naming the first malformed field.
 */
export function parseGeminiRequest(body: unknown): GeminiRequest {
  checkSchema(GeminiRequestSchema, body);
  return body as GeminiRequest;
}
