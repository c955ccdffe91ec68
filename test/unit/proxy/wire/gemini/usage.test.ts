import { expect } from 'chai';
import { geminiUsage } from '../../../../../proxy/wire/gemini/usage.js';

const META = {
  promptTokenCount: 100,
  cachedContentTokenCount: 30,
  candidatesTokenCount: 20,
  thoughtsTokenCount: 7,
  toolUsePromptTokenCount: 5,
  totalTokenCount: 132,
};

describe('Gemini usage (usageMetadata)', () => {
  it('bills cached prompt tokens as cache reads, tool-use prompt tokens as input, and thinking as output', () => {
    expect(geminiUsage.fromAnswer(META, Buffer.alloc(0), () => undefined)).to.deep.equal({
      inputTokens: 75,
      cacheReadTokens: 30,
      cacheWrite5mTokens: 0,
      cacheWrite1hTokens: 0,
      outputTokens: 27,
      reasoningTokens: 7,
      webSearchRequests: 0,
    });
  });

  it('treats a malformed count as no report, so the call bills its hold', () => {
    expect(geminiUsage.fromAnswer({ ...META, candidatesTokenCount: -1 }, Buffer.alloc(0), () => undefined)).to.equal(undefined);
  });

  it("reads a stream's last running total, final only once a candidate says why it finished", () => {
    const reader = geminiUsage.stream();
    reader.event(
      JSON.stringify({ candidates: [{ content: { parts: [{ text: 'a' }] } }], usageMetadata: { promptTokenCount: 100, totalTokenCount: 100 } }),
      undefined,
    );
    expect(reader.usage()).to.equal(undefined);
    expect(reader.reportedSoFar()).to.include({ inputTokens: 100, outputTokens: 0 });
    expect(reader.outputSeen()).to.equal(1);
    reader.event(JSON.stringify({ candidates: [{ content: { parts: [{ text: 'b' }] }, finishReason: 'STOP' }], usageMetadata: META }), undefined);
    expect(reader.usage()).to.include({ inputTokens: 75, cacheReadTokens: 30, outputTokens: 27 });
    expect(reader.finishReasons()).to.deep.equal(['STOP']);
  });
});
