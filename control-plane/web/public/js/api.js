// @ts-check
// The console API client. The browser sends the httpOnly session cookie on
// every same-origin request; the page itself never holds a token.

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} detail
   */
  constructor(status, detail) {
    super(detail);
    this.name = 'ApiError';
    this.status = status;
  }
}

/** @type {(detail: string) => void} */
let unauthorized = () => {};

/**
 * Called with the API's explanation whenever a request answers 401.
 * @param {(detail: string) => void} handler
 */
export function onUnauthorized(handler) {
  unauthorized = handler;
}

/**
 * JSON in and out. A problem+json answer becomes an ApiError carrying its
 * `detail`; a 401 also hands the user back to the sign-in page unless
 * `quiet` is set (the sign-in form shows its own errors).
 */
/**
 * @typedef {{ method?: string, body?: unknown, quiet?: boolean }} RequestOptions
 */
/**
 * @param {string} path
 * @param {RequestOptions} [options]
 * @returns {Promise<any>} the parsed JSON answer (shapes are in docs/console-api.md)
 */
export async function api(path, options = {}) {
  return (await request(path, options)).data;
}

/**
 * A GET of one page of a list that pages by header: the rows, and the cursor of the next page (`X-Next-Cursor`) or null.
 * @param {string} path
 * @returns {Promise<{ rows: any[], next: string | null }>}
 */
export async function apiPage(path) {
  const { data, headers } = await request(path, {});
  return { rows: data, next: headers.get('x-next-cursor') };
}

/**
 * @param {string} path
 * @param {RequestOptions} options
 * @returns {Promise<{ data: any, headers: Headers }>}
 */
async function request(path, { method = 'GET', body, quiet = false }) {
  // Every write is JSON, even without a body: the server refuses cookie-carried writes that are not,
  // because only a same-origin page can send that Content-Type without a preflight.
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json' };
  if (body !== undefined || method !== 'GET') headers['content-type'] = 'application/json';
  let res;
  try {
    res = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'The control plane could not be reached. Check your connection and try again.');
  }
  if (res.status === 204) return { data: undefined, headers: res.headers };
  const text = await res.text();
  let data;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = undefined;
  }
  if (!res.ok) {
    const detail = (data && (data.detail || data.title)) || `The request failed (HTTP ${res.status}).`;
    const err = new ApiError(res.status, detail);
    if (res.status === 401 && !quiet) unauthorized(detail);
    throw err;
  }
  return { data, headers: res.headers };
}

export const enc = encodeURIComponent;
