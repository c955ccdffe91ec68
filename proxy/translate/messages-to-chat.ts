import { invalidInput } from '../../shared/errors.js';
import type { Translator } from './types.js';

/** A Messages client calling a provider that speaks only Chat Completions. */
export const messagesToChat: Translator = {
  request() {
    throw invalidInput('This model is not available on the Messages format yet.');
  },
  answer() {
    throw invalidInput('This model is not available on the Messages format yet.');
  },
};
