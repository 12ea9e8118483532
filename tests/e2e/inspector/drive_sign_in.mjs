// Sign in to taskgate from the MCP Inspector 2.x web UI in Debian's Chromium, as a person would,
// then run a task as that person; print one JSON summary line on stdout.
//
//   node drive_sign_in.mjs <inspector-ui-url-with-token> <mcp-server-url>
//
// The server runs with `make serve-signin`'s settings: its own authorization server, in front of
// the Cognito-shaped development identity provider. Through the UI only:
//  1. Servers > Add Servers > "+ Add manually" (streamable-http, the URL), then the connect switch.
//     The server answers 401; the Inspector discovers the authorization server, registers itself
//     (RFC 7591) and sends the browser to /oauth/authorize.
//  2. The provider's sign-in form: the development user's name and password, "Sign in".
//  3. The stack's consent page ("Allow MCP Inspector to use your taskgate tasks?"): "Allow".
//  4. Back in the Inspector (its /oauth/callback): "Connected", MCP 2025-11-25.
//  5. Tools: slow_compute (seconds 2) with "Run as task": working -> completed, its result shown.
// Screenshots: sign-in-form.png, consent.png, signed-in.png, signed-in-task.png.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
  launchChromium,
  newTaskId,
  openTab,
  resultText,
  selectTool,
  setRunAsTask,
  setSwitch,
  showTasksPanel,
  taskIds,
  waitTaskStatus,
} from './drive.mjs';

const [uiUrl, serverUrl] = process.argv.slice(2);
const OUT = path.resolve(process.env.INSPECTOR_ARTIFACTS || path.join('test-artifacts', 'inspector'));
const USER = process.env.SIGN_IN_USER || 'dev@example.com';
const PASSWORD = process.env.SIGN_IN_PASSWORD || 'taskgate-dev-password';
const STEP_TIMEOUT = 30_000;

fs.mkdirSync(OUT, { recursive: true });
const started = Date.now();
const summary = { serverUrl, screenshots: {}, navigations: [], consoleErrors: [] };

async function shot(page, name) {
  const file = path.join(OUT, `${name}.png`);
  await page.screenshot({ path: file });
  summary.screenshots[name] = file;
}

async function run() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'inspector-sign-in-'));
  const context = await launchChromium(profile);
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(STEP_TIMEOUT);
  await page.route(/^https:\/\/fonts\.(googleapis|gstatic)\.com\//, (r) => r.abort());
  page.on('request', (request) => {
    // Every document the browser asks for, redirects included (framenavigated sees only the
    // pages that stay).
    if (!request.isNavigationRequest() || request.frame() !== page.mainFrame()) return;
    const u = new URL(request.url());
    summary.navigations.push(`${request.method()} ${u.host}${u.pathname}`);
  });
  page.on('console', (m) => {
    if (m.type() === 'error' && !/ERR_FAILED|ERR_NAME_NOT_RESOLVED/.test(m.text())) {
      summary.consoleErrors.push(m.text().slice(0, 500));
    }
  });
  try {
    // --- 1. add the server and connect: the Inspector starts the OAuth flow -------------------
    await page.goto(uiUrl);
    await page.getByRole('button', { name: 'Add Servers' }).click();
    await page.getByRole('menuitem', { name: /Add manually/ }).click();
    const add = page.getByRole('dialog');
    await add.getByRole('textbox', { name: 'Server ID' }).fill('taskgate');
    await add.getByRole('textbox', { name: 'Transport' }).click();
    await page.getByRole('option', { name: 'streamable-http' }).click();
    await add.getByRole('textbox', { name: 'URL' }).fill(serverUrl);
    await add.getByRole('button', { name: 'Add', exact: true }).click();
    await add.waitFor({ state: 'hidden' });
    await setSwitch(page, page.getByRole('switch', { name: 'Connect or disconnect "taskgate"' }), true);

    // --- 2. the identity provider's sign-in form ------------------------------------------
    await page.getByLabel('Username').waitFor({ timeout: STEP_TIMEOUT });
    summary.signInPage = new URL(page.url()).pathname;
    await page.getByLabel('Username').fill(USER);
    await page.getByLabel('Password').fill(PASSWORD);
    await shot(page, 'sign-in-form');
    await page.getByRole('button', { name: 'Sign in' }).click();

    // --- 3. the stack's consent page -------------------------------------------------------
    await page.getByRole('button', { name: 'Allow' }).waitFor({ timeout: STEP_TIMEOUT });
    summary.consentPage = new URL(page.url()).pathname;
    summary.consentHeading = (await page.getByRole('heading').first().textContent()).trim();
    await shot(page, 'consent');
    await page.getByRole('button', { name: 'Allow' }).click();

    // --- 4. back in the Inspector ----------------------------------------------------------
    await page.getByText('Connected', { exact: true }).waitFor({ timeout: STEP_TIMEOUT });
    await page.getByText('MCP 2025-11-25', { exact: true }).waitFor({ timeout: STEP_TIMEOUT });
    summary.connected = true;
    await shot(page, 'signed-in');

    // --- 5. a task as the signed-in person -----------------------------------------------
    await openTab(page, 'Tools');
    await showTasksPanel(page);
    await selectTool(page, 'slow_compute');
    await page.getByRole('textbox', { name: 'Seconds', exact: true }).fill('2');
    const task = { ranAsTask: await setRunAsTask(page, true) };
    const before = await taskIds(page);
    await page.getByRole('button', { name: 'Execute Tool' }).click();
    task.taskId = await newTaskId(page, before);
    task.statuses = [await waitTaskStatus(page, task.taskId, ['working', 'completed'])];
    task.resultText = await resultText(page, /finished after 2 seconds/);
    task.statuses.push(await waitTaskStatus(page, task.taskId, ['completed', 'failed', 'cancelled']));
    await shot(page, 'signed-in-task');
    summary.task = task;
  } catch (err) {
    summary.error = String(err && err.stack ? err.stack : err).slice(0, 4000);
    await shot(page, 'sign-in-failure').catch(() => {});
  } finally {
    summary.elapsedMs = Date.now() - started;
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

await run();
process.stdout.write(`${JSON.stringify(summary)}\n`);
process.exit(summary.error ? 1 : 0);
