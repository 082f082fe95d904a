"""Real-client conformance check with the official Python MCP SDK (spec/rust-notes.md §9.1).

Usage: mcp_client.py <okf-mcp binary> <plan.json>

The plan is {"calls": [{"tool": str, "args": object, "expect_error": bool}]}. For each mode
("legacy": initialize handshake; "auto": server/discover with fallback) the script lists the
tools, then runs every call. The SDK itself re-validates structuredContent of every non-error
result against the advertised outputSchema (a RuntimeError otherwise); error results are
re-validated explicitly, since the output schemas admit the error envelope (surface.md §17.1).
Prints one JSON report on stdout; exit status 0 only when every check held.
"""

import asyncio
import json
import sys

from mcp import Client, StdioServerParameters


async def run_mode(binary, plan, mode):
    report = {"mode": mode, "tools": [], "calls": [], "failures": []}
    params = StdioServerParameters(command=binary, args=["serve"])
    async with Client(params, mode=mode) as client:
        tools = await client.list_tools()
        for t in tools.tools:
            ann = t.annotations
            report["tools"].append(
                {
                    "name": t.name,
                    "has_output_schema": t.output_schema is not None,
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
                # Re-validate every result, error envelopes included.
                await client.session.validate_tool_result(call["tool"], result)
                entry["validated"] = True
                if entry["is_error"] != call["expect_error"]:
                    report["failures"].append(f"{call['tool']}: isError={entry['is_error']}")
            except Exception as e:  # noqa: BLE001 - report every failure
                entry["exception"] = f"{type(e).__name__}: {e}"
                report["failures"].append(f"{call['tool']}: {entry['exception']}")
            report["calls"].append(entry)
    return report


async def main():
    binary, plan_path = sys.argv[1], sys.argv[2]
    with open(plan_path, encoding="utf-8") as f:
        plan = json.load(f)
    reports = [await run_mode(binary, plan, m) for m in ("legacy", "auto")]
    print(json.dumps(reports))
    return 0 if all(not r["failures"] for r in reports) else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
