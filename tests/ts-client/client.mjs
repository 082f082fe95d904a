// Real-client check with the official TypeScript MCP SDK (spec/surface.md §18.6 rule 3a; AUT-12).
//
// Usage: node client.mjs <ts-client install dir> <okf-mcp binary> <plan.json>
//
// The install dir is where .ci/run installed tests/ts-client/package.json (target/ts-client);
// the SDK is imported from its node_modules by its public subpaths (`client/index.js`,
// `client/stdio.js`). The plan is {"calls": [{"tool": str, "args": object,
// "expect_error": bool, "digests_from": int?}]}; `digests_from` names an earlier call (a
// preview) whose `base_revision` and `plan_digest` fill `expected_revision` and
// `expected_plan_digest`, or `base_revision` and `plan_digest`, whichever the args carry.
//
// The client lists the tools (which makes the SDK compile a validator for every advertised
// outputSchema), then runs every call with `client.callTool`, which validates
// `structuredContent` against the tool's outputSchema on every result, error results included,
// and throws when it does not match. Last, a self-check: the advertised list_concepts schema
// with one member's type changed is given to the SDK's validator cache, and the same call must
// now throw, so a wrong advertised type cannot pass unnoticed.
//
// Prints one JSON report on stdout; exit status 0 only when every check held.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [installDir, binary, planPath] = process.argv.slice(2);
const sdk = pathToFileURL(
  join(installDir, "node_modules/@modelcontextprotocol/sdk/dist/esm/"),
).href;
const { Client } = await import(`${sdk}client/index.js`);
const { StdioClientTransport } = await import(`${sdk}client/stdio.js`);

const plan = JSON.parse(readFileSync(planPath, "utf8"));
const report = { sdk_version: null, tools: [], calls: [], self_check: null, failures: [] };
report.sdk_version = JSON.parse(
  readFileSync(join(installDir, "node_modules/@modelcontextprotocol/sdk/package.json"), "utf8"),
).version;

const transport = new StdioClientTransport({ command: binary, args: ["serve"], stderr: "pipe" });
const client = new Client({ name: "okf-mcp-ts-check", version: "1.0.0" });
await client.connect(transport);

const listed = await client.listTools();
for (const t of listed.tools) {
  report.tools.push({
    name: t.name,
    title: t.title ?? null,
    has_output_schema: t.outputSchema !== undefined,
    output_members: t.outputSchema ? Object.keys(t.outputSchema.properties ?? {}) : [],
  });
}

const results = [];
for (const [i, call] of plan.calls.entries()) {
  const entry = { index: i, tool: call.tool, is_error: null, validated: false };
  const args = structuredClone(call.args);
  if (call.digests_from !== undefined) {
    const from = results[call.digests_from] ?? {};
    if ("expected_revision" in args) {
      args.expected_revision = from.base_revision;
      args.expected_plan_digest = from.plan_digest;
    } else {
      args.base_revision = from.base_revision;
      args.plan_digest = from.plan_digest;
    }
  }
  try {
    // Throws (McpError) when structuredContent does not match the advertised outputSchema.
    const r = await client.callTool({ name: call.tool, arguments: args });
    entry.is_error = r.isError === true;
    entry.status = r.structuredContent?.status ?? r.structuredContent?.code ?? null;
    if (r.structuredContent === undefined) throw new Error("no structuredContent");
    if (JSON.stringify(JSON.parse(r.content[0].text)) !== JSON.stringify(r.structuredContent)) {
      throw new Error("first text item differs from structuredContent");
    }
    entry.validated = true;
    results[i] = r.structuredContent;
    if (entry.is_error !== call.expect_error) {
      report.failures.push(`${i} ${call.tool}: isError=${entry.is_error}`);
    }
  } catch (e) {
    entry.exception = `${e?.name}: ${e?.message}`;
    report.failures.push(`${i} ${call.tool}: ${entry.exception}`);
  }
  report.calls.push(entry);
}

// Self-check: the SDK rejects a result when the advertised type of one member is wrong.
const first = plan.calls.find((c) => c.tool === "list_concepts" && !c.expect_error);
const tampered = listed.tools.map((t) =>
  t.name === "list_concepts"
    ? { ...t, outputSchema: { ...t.outputSchema, properties: { ...t.outputSchema.properties, total: { type: "string" } } } }
    : t,
);
client.cacheToolMetadata(tampered);
try {
  await client.callTool({ name: "list_concepts", arguments: first.args });
  report.self_check = "accepted";
  report.failures.push("self-check: a wrong advertised type was not caught by the SDK");
} catch (e) {
  report.self_check = `${e?.name}: ${e?.message}`;
  if (!/output schema/.test(String(e?.message))) {
    report.failures.push(`self-check: unexpected error ${report.self_check}`);
  }
}

await client.close();
console.log(JSON.stringify(report));
process.exit(report.failures.length === 0 ? 0 : 1);
