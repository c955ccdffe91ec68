/**
 * Just enough of a browser for the SSO flow: follows nothing by itself
 * (`redirect: 'manual'`), keeps cookies per origin between hops, and reports
 * each answer so a test can look at every redirect on the way.
 */
export interface Hop {
  url: string;
  status: number;
  location: string | undefined;
  headers: Headers;
  text: string;
}

export class TestBrowser {
  private readonly jars = new Map<string, Map<string, string>>();

  cookie(origin: string, name: string): string | undefined {
    return this.jars.get(new URL(origin).origin)?.get(name);
  }

  /** Puts a cookie in the jar, as an earlier sign-in on that origin would have. */
  setCookie(origin: string, name: string, value: string): void {
    const key = new URL(origin).origin;
    const jar = this.jars.get(key) ?? new Map<string, string>();
    jar.set(name, value);
    this.jars.set(key, jar);
  }

  get(url: string): Promise<Hop> {
    return this.send('GET', url);
  }

  /** A form POST as a browser sends it: with the Origin of the page it was on (by default, the target's own). */
  post(url: string, origin: string | null = new URL(url).origin, form?: Record<string, string>): Promise<Hop> {
    const headers: Record<string, string> = origin === null ? {} : { origin };
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    return this.send('POST', url, headers, form && new URLSearchParams(form).toString());
  }

  private async send(method: string, url: string, extra: Record<string, string> = {}, body?: string): Promise<Hop> {
    const origin = new URL(url).origin;
    const jar = this.jars.get(origin) ?? new Map<string, string>();
    this.jars.set(origin, jar);
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, { method, redirect: 'manual', headers: { ...extra, ...(cookie ? { cookie } : {}) }, body });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some((a) => {
        const [k, v] = a.trim().split('=');
        if (k?.toLowerCase() === 'max-age') return Number(v) <= 0;
        if (k?.toLowerCase() === 'expires') return new Date(v ?? '').getTime() <= Date.now();
        return false;
      });
      if (!value || expired) jar.delete(name);
      else jar.set(name, value);
    }
    const location = res.headers.get('location');
    return { url, status: res.status, location: location ? new URL(location, url).href : undefined, headers: res.headers, text: await res.text() };
  }
}

export interface LoginRun {
  /** The control plane's answer to the button on `/login` (a POST). */
  start: Hop;
  /** The IdP's redirect back to the control plane (not yet visited), if it got that far. */
  callbackUrl: string | undefined;
  /** The last hop at the IdP when it did not redirect back. */
  stoppedAt: Hop;
}

/** Starts an SSO login and walks the IdP's redirects up to (not into) the callback. */
export async function walkToCallback(browser: TestBrowser, controlPlaneUrl: string, orgSlug: string): Promise<LoginRun> {
  const login = `${controlPlaneUrl}/v1/auth/sso/${orgSlug}/login`;
  const page = await browser.get(login);
  if (page.status !== 200) return { start: page, callbackUrl: undefined, stoppedAt: page };
  const start = await browser.post(login);
  let hop = start;
  for (let i = 0; i < 10 && hop.location; i++) {
    if (hop.location.startsWith(`${controlPlaneUrl}/v1/auth/sso/callback`)) return { start, callbackUrl: hop.location, stoppedAt: hop };
    hop = await browser.get(hop.location);
  }
  return { start, callbackUrl: undefined, stoppedAt: hop };
}

/** The full login: returns the callback's answer. */
export async function ssoLogin(browser: TestBrowser, controlPlaneUrl: string, orgSlug: string): Promise<Hop> {
  const run = await walkToCallback(browser, controlPlaneUrl, orgSlug);
  if (!run.callbackUrl) {
    throw new Error(`the IdP did not redirect back: ${run.stoppedAt.status} ${run.stoppedAt.url} ${run.stoppedAt.text.slice(0, 300)}`);
  }
  return browser.get(run.callbackUrl);
}
