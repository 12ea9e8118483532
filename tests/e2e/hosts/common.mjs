// What every Node host driver shares: the same phases and JSON lines as common.py.
//   node driver.mjs URL main|cancel RUN SECONDS
// The test copies the drivers into the npm prefix (.tools/hosts/node/drivers/), so that
// their bare imports resolve to the pinned packages there.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

// The installed version of a package (read from its package.json: not every package exports it).
export function pkgVersion(name) {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (dir !== path.dirname(dir)) {
    const file = path.join(dir, "node_modules", name, "package.json");
    if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8")).version;
    dir = path.dirname(dir);
  }
  return "?";
}
export const ABORT_AFTER = 3.0;
const ABORT_GRACE = 1.0;
// The 45 s tool (see common.py): long_work, or slow_compute where only the deployed tools exist.
export const LONG_TOOL = process.env.HOSTS_LONG_TOOL ?? "long_work";
export const QUICK_NAME = "host";
export const ELICIT_FILE = "report.csv";

const now = () => Date.now() / 1000;

const HANDLE_CANCEL = "taskgate_task_cancel";

// The task handle a plain call was answered with ("tasks as tools"), if it was.
export function taskHandle(text) {
  const match = /background task ([0-9a-f-]{36})/.exec(String(text));
  return match && String(text).includes(HANDLE_CANCEL) ? match[1] : null;
}

export function emit(scenario, fields) {
  process.stdout.write(JSON.stringify({ scenario, ...fields }) + "\n");
}

export function failure(err) {
  const chain = [];
  let seen = err;
  while (seen && chain.length < 4) {
    chain.push(`${seen.name ?? typeof seen}: ${seen.message ?? String(seen)}`.slice(0, 300));
    seen = seen.cause;
  }
  return { ok: false, error: chain.join(" <- "), trace: String(err?.stack ?? "").slice(-1500) };
}

export async function timed(scenario, work, extra = {}) {
  const start = now();
  try {
    const value = await work();
    const end = now();
    emit(scenario, { ok: true, start, end, seconds: Math.round((end - start) * 100) / 100, value, ...extra });
    return true;
  } catch (err) {
    const end = now();
    emit(scenario, { start, end, seconds: Math.round((end - start) * 100) / 100, ...extra, ...failure(err) });
    return false;
  }
}

// The text of an MCP CallToolResult, of a content array, or of a framework's own result.
export function answerText(result) {
  if (typeof result === "string") return result;
  if (Array.isArray(result)) return result.map(answerText).join("");
  if (result && Array.isArray(result.content)) return result.content.map((p) => p.text ?? "").join("");
  if (result && typeof result.text === "string") return result.text;
  return JSON.stringify(result);
}

export const sleep = (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

// Abort as JavaScript frameworks do: an AbortController's signal, aborted after `after` s.
// Says how it ended: aborted, or what the call finished with first (a task handle, for a
// call answered at once).
export async function abortAfter(start, after) {
  const controller = new AbortController();
  const call = start(controller.signal);
  await sleep(after);
  controller.abort();
  try {
    return `finished before the abort: ${answerText(await call)}`;
  } catch (err) {
    return `AbortController.abort(): ${err.name}: ${err.message}`.slice(0, 200);
  }
}

// adapter: { name, version, progress, elicitation, open(url), close(), listTools(),
//            call(tool, args, onProgress|null) -> text, cancel(tool, args, after) -> how }
export async function main(adapter) {
  const [url, phase, run, seconds] = process.argv.slice(2);
  const { name, version, progress, elicitation } = adapter;
  emit("client", { name, version, progress, elicitation });
  try {
    if (!(await timed("open", () => adapter.open(url)))) return;
    const longArgs = { seconds: Number(seconds), [LONG_TOOL === "slow_compute" ? "label" : "run"]: run };
    if (phase === "cancel") {
      await timed("cancel", async () => {
        const how = await adapter.cancel(LONG_TOOL, longArgs, ABORT_AFTER);
        const handle = taskHandle(how);
        if (handle === null) return how;
        // Answered at once with a task handle: nothing to abort; the model cancels the task instead.
        const done = await adapter.call(HANDLE_CANCEL, { handle }, null);
        return `handed a task handle, then ${HANDLE_CANCEL}: ${String(done).slice(0, 120)}`;
      });
      // What the framework sends on an abort (the TypeScript SDK's notifications/cancelled)
      // is an HTTP request of its own: a host keeps running while it goes out, so the driver
      // waits a moment before it hangs up, instead of killing it in flight.
      await sleep(ABORT_GRACE);
      return;
    }
    await timed("list", () => adapter.listTools());
    await timed("quick", () => adapter.call("greet", { name: QUICK_NAME }, null));
    if (elicitation === "callback") {
      await timed("elicit", () => adapter.call("confirm_delete", { filename: ELICIT_FILE }, null));
    }
    const arrivals = [];
    const sink = progress === "callback" ? () => arrivals.push(now()) : null;
    const start = now();
    await timed("long", () => adapter.call(LONG_TOOL, longArgs, sink));
    const step = Math.max(1, Math.floor(arrivals.length / 40));
    emit("progress", {
      count: arrivals.length,
      start,
      arrivals: arrivals.filter((_, i) => i % step === 0).map((a) => Math.round((a - start) * 100) / 100),
      first: arrivals[0] ?? null,
      last: arrivals.at(-1) ?? null,
    });
  } finally {
    await timed("close", () => adapter.close());
    process.exit(0); // a hang-up: whatever the framework left open
  }
}
