/**
 * Debian's chromium driven by npm playwright-core (never `playwright install`), for the tests of pages: whether it is
 * installed (a loud skip without it, a failure under CI=true, where .ci/run installs it), a launch that works as root,
 * and a page that can reach the server's origin only (every other request refused and recorded, page errors kept).
 */
import assert from "node:assert/strict";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";

export const CHROMIUM = Deno.env.get("CHROMIUM_PATH") ?? "/usr/bin/chromium";
const inCi = Deno.env.get("CI") === "true";

function chromiumInstalled(): boolean {
  try {
    return Deno.statSync(CHROMIUM).isFile;
  } catch {
    return false;
  }
}

/** Whether a browser test runs here; warns loudly (once per file) when it cannot. `what`: the tests' name. */
export function browserAvailable(what: string): { installed: boolean; ignore: boolean } {
  const installed = chromiumInstalled();
  if (!installed) {
    const message = `${CHROMIUM} not found (Debian: apt-get install -y chromium): ${what} cannot run`;
    console.warn(`\n!!!!!!!!!!\n!!! ${message}${inCi ? "" : "; SKIPPED"}\n!!!!!!!!!!\n`);
  }
  return { installed, ignore: !installed && !inCi };
}

export async function launchChromium(): Promise<Browser> {
  assert.ok(chromiumInstalled(), `${CHROMIUM} is missing and CI=true: .ci/run installs Debian's chromium`);
  // As root (CI, containers) chromium refuses to start sandboxed.
  return await chromium.launch({ executablePath: CHROMIUM, args: Deno.uid() === 0 ? ["--no-sandbox"] : [] });
}

export interface OfflinePage {
  context: BrowserContext;
  page: Page;
  /** Requests to any other origin, refused. */
  refused: string[];
  /** Uncaught page errors. */
  pageErrors: string[];
}

/** A new context and page that reach `origin` only. */
export async function offlinePage(
  browser: Browser,
  origin: string,
  viewport: { width: number; height: number },
): Promise<OfflinePage> {
  const context = await browser.newContext({ viewport });
  const refused: string[] = [];
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (new URL(url).origin === origin) return route.continue();
    refused.push(url);
    return route.abort("internetdisconnected");
  });
  const page = await context.newPage();
  const pageErrors: string[] = [];
  page.on("pageerror", (err) => pageErrors.push(err.message));
  return { context, page, refused, pageErrors };
}

let shotDir: Promise<string> | undefined;

/**
 * Saves a full-page screenshot as `<name>.png` in `SCREENSHOT_DIR` (created if missing), or else in one temporary
 * folder per test process, and prints its path. Screenshots are never committed.
 */
export async function screenshot(page: Page, name: string): Promise<string> {
  shotDir ??= (async () => {
    const dir = Deno.env.get("SCREENSHOT_DIR");
    if (!dir) return await Deno.makeTempDir({ prefix: "dashboard-screenshots-" });
    await Deno.mkdir(dir, { recursive: true });
    return dir;
  })();
  const path = `${await shotDir}/${name}.png`;
  await page.screenshot({ path, fullPage: true });
  console.log(`dashboard screenshot: ${path}`);
  return path;
}
