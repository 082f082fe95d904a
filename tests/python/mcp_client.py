"""Real-client conformance check with the official Python MCP SDK (spec/rust-notes.md §9.1).

Usage: mcp_client.py <okf-mcp binary> <plan.json> <schemas dir>

The plan is {"calls": [{"tool": str, "args": object, "expect_error": bool}]}. For each mode
("legacy": initialize handshake; "auto": server/discover with fallback) the script lists the
tools, then runs every call. Every tool advertises a loosened outputSchema (surface.md §18.6
rule 3a): the SDK itself validates every success result against it (call_tool raises on a
mismatch); it skips error results, so this script validates each error envelope against the
advertised outputSchema as listed. Every structuredContent, error envelopes included, is also
validated here against the checked-in full <tool>.output.schema.json (surface.md §17.1), and
the first text item must parse to exactly the structured object (§18.2 rule 1).
Prints one JSON report on stdout; exit status 0 only when every check held.
"""

import asyncio
import json
import os
import sys

import jsonschema

from mcp import Client, StdioServerParameters


def output_validator(schemas, tool):
    with open(os.path.join(schemas, f"{tool}.output.schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    return jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


async def run_mode(binary, plan, mode, schemas):
    report = {"mode": mode, "tools": [], "calls": [], "failures": []}
    params = StdioServerParameters(command=binary, args=["serve"])
    async with Client(params, mode=mode) as client:
        tools = await client.list_tools()
        advertised = {t.name: t.output_schema for t in tools.tools}
        for t in tools.tools:
            ann = t.annotations
            report["tools"].append(
                {
                    "name": t.name,
                    "has_output_schema": t.output_schema is not None,
                    "title": t.title,
                    "annotations": None
                    if ann is None
                    else {
                        "readOnlyHint": ann.read_only_hint,
                        "destructiveHint": ann.destructive_hint,
                        "idempotentHint": ann.idempotent_hint,
                        "openWorldHint": ann.open_world_hint,
                    },
                }
            )
        for call in plan["calls"]:
            entry = {"tool": call["tool"], "is_error": None, "validated": False}
            try:
                result = await client.call_tool(call["tool"], call["args"])
                entry["is_error"] = bool(result.is_error)
                entry["structured"] = result.structured_content
                entry["text"] = result.content[0].text if result.content else None
                # Validate every result, error envelopes included. The SDK has checked a
                # success against the advertised outputSchema already; an error it skips.
                if entry["is_error"]:
                    jsonschema.Draft202012Validator(advertised[call["tool"]]).validate(
                        result.structured_content
                    )
                output_validator(schemas, call["tool"]).validate(result.structured_content)
                if json.loads(entry["text"]) != result.structured_content:
                    raise ValueError("first text item differs from structuredContent")
                entry["validated"] = True
                if entry["is_error"] != call["expect_error"]:
                    report["failures"].append(f"{call['tool']}: isError={entry['is_error']}")
            except Exception as e:  # noqa: BLE001 - report every failure
                entry["exception"] = f"{type(e).__name__}: {e}"
                report["failures"].append(f"{call['tool']}: {entry['exception']}")
            report["calls"].append(entry)
    return report


async def main():
    binary, plan_path, schemas = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(plan_path, encoding="utf-8") as f:
        plan = json.load(f)
    reports = [await run_mode(binary, plan, m, schemas) for m in ("legacy", "auto")]
    print(json.dumps(reports))
    return 0 if all(not r["failures"] for r in reports) else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
