import { invalidInput } from '../../shared/errors.js';
import type { Translator } from './types.js';

/** A Chat Completions client calling a provider that speaks only Messages. */
export const chatToMessages: Translator = {
  request() {
    throw invalidInput('This model is not available on the Chat Completions format yet.');
  },
  answer() {
    throw invalidInput('This model is not available on the Chat Completions format yet.');
  },
};
