import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { skipped } from './skips.js';

/** Debian's Chromium (CI installs it with apt); CHROMIUM_PATH overrides. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

export const SCREENSHOT_DIR = fileURLToPath(new URL('../e2e/screenshots/', import.meta.url));

/** Whether Chromium is installed; in CI it must be (.ci/run installs it), so callers fail there instead of skipping. */
export function browserInstalled(): boolean {
  return existsSync(CHROMIUM_PATH);
}

/**
 * A browser suite's start: Chromium launched, or the suite skipped (and
 * listed) where none is installed; in CI it must be, so there it fails.
 */
export async function launchOrSkip(suite: Mocha.Context, what: string): Promise<Browser> {
  if (!browserInstalled() && !process.env.CI) {
    skipped(`browser tests of "${what}"`, `no Chromium at ${CHROMIUM_PATH}`);
    suite.skip();
  }
  return launchBrowser();
}

/** Headless Chromium that never reaches past loopback on its own. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export interface ConsolePage {
  context: BrowserContext;
  page: Page;
  /** Uncaught page errors, console errors and CSP violations seen so far. */
  problems: string[];
}

export const DESKTOP = { width: 1280, height: 860 };
export const PHONE = { width: 390, height: 844 };

/** A fresh browser profile (own cookies) on one page, recording anything that went wrong in it. */
export async function openConsole(browser: Browser, baseUrl: string, viewport = DESKTOP): Promise<ConsolePage> {
  const context = await browser.newContext({ baseURL: baseUrl, viewport, locale: 'en-US', timezoneId: 'UTC' });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    // A failed API call is logged by Chromium as a resource error: the page
    // shows those to the user itself, so only script errors count here.
    if (msg.type() === 'error' && !/Failed to load resource/.test(msg.text())) problems.push(`console: ${msg.text()}`);
  });
  return { context, page, problems };
}

/** Full-page PNG under test/e2e/screenshots/ (git-ignored) for a person to look at. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = `${SCREENSHOT_DIR}${name}.png`;
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Signs in with a console token and opens one page from the navigation, waiting for its heading. */
export async function signInTo(page: Page, token: string, link: string, heading: string | RegExp): Promise<void> {
  await page.goto('/');
  await page.getByLabel('Console token').fill(token);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: /^Workspace/ }).waitFor();
  await page.getByRole('navigation').getByRole('link', { name: link, exact: true }).click();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}
