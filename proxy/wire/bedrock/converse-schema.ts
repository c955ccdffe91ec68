import { z } from 'zod';
import { checkSchema } from '../schema-check.js';

/**
 * What a Converse request (a client of the workspace's Bedrock route) may
 * hold, checked field by field as Bedrock checks it. Well-formed fields this
 * schema does not know pass through (the translation to Chat names them as
 * dropped, or refuses them); a malformed one is refused naming it, e.g.
 * `messages[0].content[1].toolUse.name: expected a string`.
 */

/** An image's bytes arrive base64'd in the JSON body (the SDK encodes its `Uint8Array`); an S3 location is read by Bedrock alone. */
const ImageBlock = z.looseObject({
  format: z.enum(['png', 'jpeg', 'gif', 'webp']),
  source: z.looseObject({ bytes: z.string().optional(), s3Location: z.unknown().optional() }),
});

const ToolUseBlock = z.looseObject({ toolUseId: z.string(), name: z.string(), input: z.unknown() });

const ToolResultBlock = z.looseObject({
  toolUseId: z.string(),
  content: z.array(z.looseObject({ text: z.string().optional(), json: z.unknown().optional(), image: ImageBlock.optional() })),
  status: z.enum(['success', 'error']).optional(),
});

const ContentBlock = z.looseObject({
  text: z.string().optional(),
  image: ImageBlock.optional(),
  toolUse: ToolUseBlock.optional(),
  toolResult: ToolResultBlock.optional(),
});

const ToolSpec = z.looseObject({
  name: z.string().min(1),
  description: z.string().optional(),
  inputSchema: z.looseObject({ json: z.record(z.string(), z.unknown()) }),
});

const ConverseRequestSchema = z.looseObject({
  messages: z.array(z.looseObject({ role: z.enum(['user', 'assistant']), content: z.array(ContentBlock) })),
  system: z.array(z.looseObject({ text: z.string().optional() })).optional(),
  inferenceConfig: z
    .looseObject({
      maxTokens: z.number().int().min(1).optional(),
      temperature: z.number().min(0).optional(),
      topP: z.number().min(0).max(1).optional(),
      stopSequences: z.array(z.string()).optional(),
    })
    .optional(),
  toolConfig: z
    .looseObject({
      tools: z.array(z.looseObject({ toolSpec: ToolSpec.optional() })).min(1),
      toolChoice: z
        .looseObject({ auto: z.looseObject({}).optional(), any: z.looseObject({}).optional(), tool: z.looseObject({ name: z.string() }).optional() })
        .optional(),
    })
    .optional(),
});

export type ConverseRequest = z.infer<typeof ConverseRequestSchema>;
export type ConverseMessage = ConverseRequest['messages'][number];
export type ConverseBlock = ConverseMessage['content'][number];
export type ConverseImage = z.infer<typeof ImageBlock>;
export type ConverseToolConfig = NonNullable<ConverseRequest['toolConfig']>;

/** The client's body → a checked Converse request; a 400 naming the first malformed field. */
export function parseConverseRequest(body: unknown): ConverseRequest {
  checkSchema(ConverseRequestSchema, body);
  return body as ConverseRequest;
}
