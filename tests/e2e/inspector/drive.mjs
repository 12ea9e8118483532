// Drive the MCP Inspector 2.x web UI in Debian's Chromium (playwright-core) against a running
// taskgate server, as a person would, and print one JSON summary line on stdout.
//
//   node drive.mjs <inspector-ui-url-with-token> <mcp-server-url>
//
// Starts nothing itself: the Inspector web UI (launched with a writable, empty --catalog) and the
// MCP server are already running. Env: INSPECTOR_ARTIFACTS (screenshots; default
// test-artifacts/inspector under the cwd), CHROMIUM (default /usr/bin/chromium),
// INSPECTOR_TOOLS (the npm prefix holding playwright-core; default <repo>/.tools/inspector).
// Chromium runs headless with a fresh, empty user-data-dir (removed at the end).
//
// What it does, through the UI only:
//  1. Servers > Add Servers > "+ Add manually": Server ID, Transport "streamable-http", the URL
//     field; then the card's connect switch. Era "Legacy" (2025-11-25: initialize + session).
//  2. Tools: reads the tool list; slow_compute (seconds 3) with "Run as task" on; screenshots
//     while the task is working (task-running.png) and when it completed (task-completed.png).
//  3. confirm_delete (report.csv) as a task in the 2025-11-25 era: waits for the Inspector to
//     show the elicitation form. If it never does (Inspector 2.12.0 polls tasks/get and calls
//     tasks/result only after a terminal status, so the elicitation/create that the server sends
//     on the tasks/result stream never arrives), it records what the Inspector sent and cancels
//     the task with the Tasks panel's "Cancel Task" (tasks/cancel).
//  3b. confirm_delete as a plain call (no task) in the same era: the elicitation form comes on the
//     call's own stream; it is answered and the result shown.
//  4. Server Settings > Protocol Era "Modern (2026-07-28, sessionless)", reconnect, run
//     confirm_delete again: the task's input_required carries the elicitation, which the
//     Inspector renders as a form; ticks "confirm", screenshots it (elicitation.png), submits
//     (tasks/update) and checks the result "Deleted report.csv".
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..', '..', '..');
const TOOLS = process.env.INSPECTOR_TOOLS || path.join(ROOT, '.tools', 'inspector');
const require = createRequire(path.join(TOOLS, 'node_modules', '/'));
const { chromium } = require('playwright-core');

const [uiUrl, serverUrl] = process.argv.slice(2);
if (!uiUrl || !serverUrl) {
  console.error('usage: node drive.mjs <inspector-ui-url> <mcp-server-url>');
  process.exit(2);
}
const OUT = path.resolve(process.env.INSPECTOR_ARTIFACTS || path.join('test-artifacts', 'inspector'));
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const SERVER_ID = 'taskgate';
const STEP_TIMEOUT = 30_000;
const LEGACY_ELICITATION_WAIT_MS = 8_000;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

fs.mkdirSync(OUT, { recursive: true });
const started = Date.now();
const summary = {
  inspectorUrl: uiUrl.replace(/(MCP_INSPECTOR_API_TOKEN=)[^&]+/, '$1***'),
  serverUrl,
  screenshots: {},
  steps: [],
  consoleErrors: [],
};
const sent = []; // JSON-RPC messages the Inspector's browser client sent (via its backend)

function step(name, extra = {}) {
  summary.steps.push({ name, atMs: Date.now() - started, ...extra });
}

async function shot(page, name) {
  const file = path.join(OUT, `${name}.png`);
  await page.screenshot({ path: file });
  summary.screenshots[name] = file;
  return file;
}

function methodsSince(index) {
  return sent.slice(index).map((m) => m.method ?? (m.id !== undefined ? `response:${m.id}` : '?'));
}

function countBy(list) {
  const out = {};
  for (const x of list) out[x] = (out[x] ?? 0) + 1;
  return out;
}

/** Debian's Chromium, headless, with a fresh profile; no background networking (none here). */
export async function launchChromium(profile) {
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    viewport: { width: 1440, height: 900 },
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

export async function openTab(page, label) {
  // Mantine SegmentedControl: the radio input is hidden; its <label> is what a person clicks.
  await page.locator('.mantine-SegmentedControl-root label').filter({ hasText: new RegExp(`^${label}$`) }).first().click();
}

export async function showTasksPanel(page) {
  // The side panel opens on "Logs" when the server declares the logging capability (taskgate
  // does): the task cards are on its "Tasks" tab.
  const tab = page.getByRole('tab', { name: 'Tasks', exact: true });
  if (await tab.count()) await tab.first().click();
  else await page.getByText('Tasks', { exact: true }).first().click();
}

async function toolNames(page) {
  const items = page.locator('[data-testid="tools-screen"] button[data-variant="listItem"]');
  await items.first().waitFor({ timeout: STEP_TIMEOUT });
  const names = [];
  for (const item of await items.all()) {
    // A tool with a title shows the title, then the name; the name is the last line.
    const texts = await item.locator('p').allTextContents();
    names.push(texts[texts.length - 1].trim());
  }
  return names;
}

export async function selectTool(page, name) {
  await page
    .locator('[data-testid="tools-screen"] button[data-variant="listItem"]')
    .filter({ has: page.getByText(name, { exact: true }) })
    .click();
  await page.getByRole('button', { name: 'Execute Tool' }).waitFor({ timeout: STEP_TIMEOUT });
}

export async function setSwitch(page, sw, on) {
  // Mantine Switch: the checkbox is visually hidden; a person clicks the visible track.
  if ((await sw.isChecked()) === on) return;
  await page.locator('.mantine-Switch-root').filter({ has: sw }).locator('.mantine-Switch-track').click();
  const deadline = Date.now() + 5_000;
  while ((await sw.isChecked()) !== on && Date.now() < deadline) await page.waitForTimeout(50);
}

export async function setRunAsTask(page, on) {
  const sw = page.getByRole('switch', { name: 'Run as task' });
  if ((await sw.count()) === 0) return null; // not offered (modern era: the server decides)
  await setSwitch(page, sw, on);
  return await sw.isChecked();
}

function taskCard(page, taskId) {
  // Cards nest (the Tasks panel is a card too); the last match in document order is the task's own.
  return page.locator('.mantine-Card-root').filter({ hasText: `ID: ${taskId}` }).last();
}

export async function taskIds(page) {
  const texts = await page.getByText(/^ID: /).allTextContents();
  return texts.map((t) => (t.match(UUID) || [])[0]).filter(Boolean);
}

export async function newTaskId(page, before) {
  const deadline = Date.now() + STEP_TIMEOUT;
  while (Date.now() < deadline) {
    const fresh = (await taskIds(page)).filter((id) => !before.includes(id));
    if (fresh.length) return fresh[0];
    await page.waitForTimeout(100);
  }
  throw new Error('no new task appeared in the Tasks panel');
}

async function taskStatus(page, taskId) {
  const badge = taskCard(page, taskId).locator('.mantine-Badge-root').first();
  return (await badge.textContent())?.trim().toLowerCase();
}

export async function waitTaskStatus(page, taskId, wanted, timeout = STEP_TIMEOUT) {
  const deadline = Date.now() + timeout;
  let last;
  while (Date.now() < deadline) {
    last = await taskStatus(page, taskId).catch(() => undefined);
    if (wanted.includes(last)) return last;
    await page.waitForTimeout(100);
  }
  throw new Error(`task ${taskId} did not reach ${wanted.join('/')} (last: ${last})`);
}

/** Tick "confirm" in confirm_delete's elicitation form, screenshot it, submit; returns its text. */
async function confirmInForm(page, form, shotName) {
  const text = (await form.innerText()).slice(0, 500);
  await form.getByRole('checkbox', { name: 'confirm' }).check();
  await shot(page, shotName);
  await form.getByRole('button', { name: 'Submit' }).click();
  return text;
}

export async function resultText(page, pattern, timeout = STEP_TIMEOUT) {
  const el = page.getByText(pattern).first();
  await el.waitFor({ timeout });
  return (await el.textContent()).trim();
}

async function connect(page, protocolLabel) {
  const sw = page.getByRole('switch', { name: `Connect or disconnect "${SERVER_ID}"` });
  await setSwitch(page, sw, true);
  await page.getByText('Connected', { exact: true }).waitFor({ timeout: STEP_TIMEOUT });
  await page.getByText(protocolLabel, { exact: true }).waitFor({ timeout: STEP_TIMEOUT });
}

async function disconnect(page) {
  await openTab(page, 'Servers');
  const sw = page.getByRole('switch', { name: `Connect or disconnect "${SERVER_ID}"` });
  await setSwitch(page, sw, false);
  await page.getByText('Disconnected', { exact: true }).waitFor({ timeout: STEP_TIMEOUT });
}

async function run() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'inspector-chromium-'));
  const context = await launchChromium(profile);
  const page = context.pages()[0] ?? (await context.newPage());
  summary.browser = await page.evaluate(() => navigator.userAgent.match(/HeadlessChrome\/[\d.]+|Chrome\/[\d.]+/)?.[0]);
  page.setDefaultTimeout(STEP_TIMEOUT);
  // The UI links Google Fonts; no network here, so fail those at once instead of via DNS.
  await page.route(/^https:\/\/fonts\.(googleapis|gstatic)\.com\//, (r) => r.abort());
  page.on('console', (m) => {
    if (m.type() === 'error' && !/ERR_FAILED|ERR_NAME_NOT_RESOLVED/.test(m.text())) {
      summary.consoleErrors.push(m.text().slice(0, 500));
    }
  });
  page.on('pageerror', (e) => summary.consoleErrors.push(`pageerror: ${String(e).slice(0, 500)}`));
  page.on('request', (r) => {
    if (r.method() !== 'POST' || !r.url().includes('/api/mcp/send')) return;
    try {
      const msg = JSON.parse(r.postData() || '{}').message || {};
      sent.push({ atMs: Date.now() - started, method: msg.method, id: msg.id, params: msg.params });
    } catch {
      /* not JSON */
    }
  });

  try {
    // --- 1. add the server through the form and connect (2025-11-25) -----------------------
    await page.goto(uiUrl);
    await page.getByRole('button', { name: 'Add Servers' }).click();
    await page.getByRole('menuitem', { name: /Add manually/ }).click();
    const add = page.getByRole('dialog');
    await add.getByRole('textbox', { name: 'Server ID' }).fill(SERVER_ID);
    await add.getByRole('textbox', { name: 'Transport' }).click();
    await page.getByRole('option', { name: 'streamable-http' }).click();
    await add.getByRole('textbox', { name: 'URL' }).fill(serverUrl);
    await add.getByRole('button', { name: 'Add', exact: true }).click();
    await add.waitFor({ state: 'hidden' });
    await connect(page, 'MCP 2025-11-25');
    summary.inspectorVersion = (await page.getByText(/^v2\.\d+\.\d+$/).first().textContent()).trim();
    step('connected', { protocol: '2025-11-25' });

    // --- 2. tools/list, then slow_compute as a task --------------------------------------
    await openTab(page, 'Tools');
    await showTasksPanel(page);
    summary.tools = await toolNames(page);
    step('tools listed', { count: summary.tools.length });

    await selectTool(page, 'slow_compute');
    await page.getByRole('textbox', { name: 'Seconds', exact: true }).fill('3');
    const slow = { arguments: { seconds: 3 } };
    slow.ranAsTask = await setRunAsTask(page, true);
    let before = await taskIds(page);
    let mark = sent.length;
    const t0 = Date.now();
    await page.getByRole('button', { name: 'Execute Tool' }).click();
    if (slow.ranAsTask) {
      slow.taskId = await newTaskId(page, before);
      slow.statuses = [await waitTaskStatus(page, slow.taskId, ['working'])];
      // Let a tasks/get poll bring the worker's progress message into the card.
      await taskCard(page, slow.taskId).getByText(/s of 3s$/).waitFor({ timeout: 5_000 }).catch(() => {});
      slow.runningMessage = (await taskCard(page, slow.taskId).getByText(/of 3s$|in progress/).first().textContent().catch(() => null))?.trim();
      await shot(page, 'task-running');
      slow.resultText = await resultText(page, /finished after 3 seconds/);
      slow.statuses.push(await waitTaskStatus(page, slow.taskId, ['completed', 'failed', 'cancelled']));
    } else {
      await page.getByRole('button', { name: 'Cancel', exact: true }).waitFor({ timeout: 5_000 }).catch(() => {});
      await shot(page, 'task-running');
      slow.resultText = await resultText(page, /finished after 3 seconds/);
      slow.statuses = ['plain call'];
    }
    slow.elapsedMs = Date.now() - t0;
    slow.status = slow.statuses[slow.statuses.length - 1];
    slow.methods = countBy(methodsSince(mark));
    slow.toolsCallParams = sent.slice(mark).find((m) => m.method === 'tools/call')?.params;
    await shot(page, 'task-completed');
    summary.slowCompute = slow;
    step('slow_compute done', { status: slow.status });

    // --- 3. confirm_delete as a task, 2025-11-25 era -------------------------------------
    await selectTool(page, 'confirm_delete');
    await page.getByRole('textbox', { name: 'Filename', exact: true }).fill('report.csv');
    const legacy = { arguments: { filename: 'report.csv' } };
    legacy.ranAsTask = await setRunAsTask(page, true);
    before = await taskIds(page);
    mark = sent.length;
    await page.getByRole('button', { name: 'Execute Tool' }).click();
    const form = page.getByRole('dialog').filter({ hasText: 'Elicitation Request' });
    if (legacy.ranAsTask) {
      legacy.taskId = await newTaskId(page, before);
      legacy.statusSeen = await waitTaskStatus(page, legacy.taskId, ['input required', 'completed', 'failed']);
    }
    legacy.elicitationShown = await form
      .waitFor({ timeout: LEGACY_ELICITATION_WAIT_MS })
      .then(() => true)
      .catch(() => false);
    legacy.methodsWhileWaiting = countBy(methodsSince(mark));
    if (legacy.elicitationShown) {
      legacy.elicitationText = await confirmInForm(page, form, 'elicitation-legacy');
      legacy.resultText = await resultText(page, /^(Deleted|Kept) report\.csv$/);
      if (legacy.taskId) legacy.finalStatus = await waitTaskStatus(page, legacy.taskId, ['completed', 'failed', 'cancelled']);
    } else if (legacy.taskId) {
      legacy.statusAfterWait = await taskStatus(page, legacy.taskId);
      await shot(page, 'legacy-input-required');
      await taskCard(page, legacy.taskId).getByRole('button', { name: 'Cancel Task' }).click();
      legacy.finalStatus = await waitTaskStatus(page, legacy.taskId, ['cancelled', 'completed', 'failed']);
      legacy.methodsAfterCancel = countBy(methodsSince(mark));
      await page.getByRole('button', { name: 'Execute Tool' }).waitFor({ timeout: STEP_TIMEOUT });
    } else {
      // A plain call: the error (if any) is in the result panel.
      legacy.toolPanelText = (await page.locator('[data-testid="tools-screen"]').innerText()).slice(-600);
    }
    summary.confirmDeleteLegacy = legacy;
    step('confirm_delete (2025-11-25) done', { elicitationShown: legacy.elicitationShown });

    // --- 3b. confirm_delete as a plain call ("Run as task" off), 2025-11-25 era -------------
    // taskgate makes the call a task and sends elicitation/create on the call's own stream.
    await selectTool(page, 'confirm_delete');
    await page.getByRole('textbox', { name: 'Filename', exact: true }).fill('plain.csv');
    const plain = { ranAsTask: await setRunAsTask(page, false) };
    mark = sent.length;
    await page.getByRole('button', { name: 'Execute Tool' }).click();
    plain.elicitationShown = await form
      .waitFor({ timeout: STEP_TIMEOUT })
      .then(() => true)
      .catch(() => false);
    if (plain.elicitationShown) {
      plain.elicitationText = await confirmInForm(page, form, 'elicitation-plain-call');
      plain.resultText = await resultText(page, /^(Deleted|Kept) plain\.csv$/);
    } else {
      plain.toolPanelText = (await page.locator('[data-testid="tools-screen"]').innerText()).slice(-600);
    }
    plain.toolsCallParams = sent.slice(mark).find((m) => m.method === 'tools/call')?.params;
    plain.methods = countBy(methodsSince(mark));
    summary.confirmDeletePlain = plain;
    step('confirm_delete plain call (2025-11-25) done', { resultText: plain.resultText });

    // --- 4. switch the server to the 2026-07-28 era and answer the elicitation --------------
    await disconnect(page);
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    const settings = page.getByRole('dialog').filter({ hasText: 'Server Settings' });
    const era = settings.getByRole('textbox', { name: 'Protocol Era' });
    if (!(await era.isVisible())) await settings.getByRole('button', { name: 'Options' }).click();
    // The modal saves on change (a debounced PUT /api/servers/<id>, then the list is re-read);
    // connecting before that lands would use the old era.
    let putSeen = false;
    const saved = page.waitForResponse((r) => {
      const req = r.request();
      putSeen ||=
        req.method() === 'PUT' &&
        new URL(r.url()).pathname === `/api/servers/${SERVER_ID}` &&
        (req.postData() || '').includes('"protocolEra":"modern"');
      return putSeen;
    });
    const reread = page.waitForResponse(
      (r) => putSeen && r.request().method() === 'GET' && new URL(r.url()).pathname === '/api/servers',
    );
    await era.click();
    await page.getByRole('option', { name: /^Modern \(2026-07-28/ }).click();
    summary.protocolEraSetting = await era.inputValue();
    if (!(await saved).ok()) throw new Error(`saving the server settings failed: ${(await saved).status()}`);
    await reread;
    await settings.getByRole('button', { name: 'Close' }).first().click();
    await settings.waitFor({ state: 'hidden' });
    await connect(page, 'MCP 2026-07-28');
    step('connected', { protocol: '2026-07-28' });

    await openTab(page, 'Tools');
    await showTasksPanel(page);
    summary.toolsModern = await toolNames(page);
    await selectTool(page, 'confirm_delete');
    await page.getByRole('textbox', { name: 'Filename', exact: true }).fill('report.csv');
    const modern = { arguments: { filename: 'report.csv' } };
    modern.runAsTaskSwitch = await setRunAsTask(page, true); // null: the UI offers none in this era
    before = await taskIds(page);
    mark = sent.length;
    await page.getByRole('button', { name: 'Execute Tool' }).click();
    await form.waitFor({ timeout: STEP_TIMEOUT });
    modern.taskId = (await taskIds(page)).find((id) => !before.includes(id)) ?? null;
    if (modern.taskId) modern.statusAtElicitation = await taskStatus(page, modern.taskId);
    modern.elicitationText = await confirmInForm(page, form, 'elicitation');
    modern.elicitationMessage = (modern.elicitationText.match(/“([^”]*)”/) || [])[1] ?? null;
    modern.resultText = await resultText(page, /^(Deleted|Kept) report\.csv$/);
    if (modern.taskId) modern.finalStatus = await waitTaskStatus(page, modern.taskId, ['completed', 'failed', 'cancelled']);
    modern.methods = countBy(methodsSince(mark));
    modern.inputResponses = sent
      .slice(mark)
      .filter((m) => m.method === 'tasks/update')
      .map((m) => m.params?.inputResponses ?? null);
    await shot(page, 'elicitation-completed');
    summary.confirmDelete = modern;
    step('confirm_delete (2026-07-28) done', { result: modern.resultText });
  } catch (err) {
    summary.error = String(err && err.stack ? err.stack : err).slice(0, 4000);
    await shot(page, 'failure').catch(() => {});
  } finally {
    summary.elapsedMs = Date.now() - started;
    summary.sentMethods = sent.map((m) => `${m.atMs}ms ${m.method ?? `response:${m.id}`}`);
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

// Run as a script (drive_sign_in.mjs imports the helpers above and drives its own steps).
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await run();
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  process.exit(summary.error ? 1 : 0);
}
