"""AUT-14: a real agent-framework client, mcp-use with its LangChain adapter (pinned by
tests/python/mcp_use.requirements.txt, installed by .ci/run into target/mcp-use-venv).

Usage: mcp_use_client.py <okf-mcp binary> <bundle dir>

No LLM is involved: the adapter turns tools/list into LangChain tools (a pydantic model per
inputSchema, every optional member defaulting to None), and the script invokes those tool
objects directly, as an agent's tool call would. mcp-use fills every unset optional top-level
argument with null before it sends the call (its default null-filling; spec/surface.md §18.6
rule 3b), and its MCP SDK validates each success's structuredContent against the advertised
outputSchema (rule 3a). The calls: list_concepts, read_concept, preview_concept_patch, and a
read_concept of an id that does not exist (an error result).

Prints one JSON report on stdout; exit status 0 only when every check held.
"""

import asyncio
import json
import logging
import os
import sys

# mcp-use sends anonymous usage telemetry unless this is set; the test must stay offline.
os.environ["MCP_USE_ANONYMIZED_TELEMETRY"] = "false"

from mcp_use import MCPClient  # noqa: E402
from mcp_use.agents.adapters.langchain_adapter import LangChainAdapter  # noqa: E402

# mcp-use logs to stdout; stdout carries only the report.
for handler in list(logging.getLogger("mcp_use").handlers):
    logging.getLogger("mcp_use").removeHandler(handler)
logging.getLogger("mcp_use").addHandler(logging.StreamHandler(sys.stderr))


def structured(answer):
    """The structuredContent of a tool answer: the adapter returns the text items joined by
    newlines (a success) or a dict whose `details` holds them (an error); the first text item
    is the compact JSON of structuredContent (spec/surface.md §18.2 rule 1)."""
    text = answer["details"] if isinstance(answer, dict) else answer
    return json.loads(text.split("\n", 1)[0])


def nested_models(schema):
    """Names of the nested models pydantic built for a tool's arguments (from `$defs`)."""
    return sorted(schema.get("$defs", {}).keys())


async def main():
    binary, bundle = sys.argv[1], sys.argv[2]
    report = {"tools": [], "calls": [], "failures": []}
    client = MCPClient.from_dict({"mcpServers": {"okf": {"command": binary, "args": ["serve"]}}})
    try:
        tools = await LangChainAdapter().create_tools(client)
        by_name = {t.name: t for t in tools}
        for t in tools:
            schema = t.args_schema.model_json_schema()
            optional = [n for n, f in t.args_schema.model_fields.items() if not f.is_required()]
            report["tools"].append(
                {
                    "name": t.name,
                    "optional": optional,
                    "nested_models": len(nested_models(schema)),
                    # A $ref'd string would come out as a nested model here (rule 3a).
                    "bundle_path": schema["properties"]["bundle_path"],
                }
            )
        plan = [
            ("list_concepts", {"bundle_path": bundle}, False),
            ("read_concept", {"bundle_path": bundle, "concept_id": "tables/orders"}, False),
            (
                "preview_concept_patch",
                {
                    "bundle_path": bundle,
                    "actor": "human:mcp-use",
                    "operations": [
                        {
                            "kind": "set_lifecycle",
                            "concept_id": "tables/orders",
                            "lifecycle": {"status": "deprecated"},
                        }
                    ],
                },
                False,
            ),
            ("read_concept", {"bundle_path": bundle, "concept_id": "no/such"}, True),
        ]
        for name, args, expect_error in plan:
            entry = {"tool": name}
            try:
                answer = await by_name[name].ainvoke(args)
                entry["is_error"] = isinstance(answer, dict)
                sc = structured(answer)
                entry["status"] = sc.get("status", sc.get("code"))
                entry["notices"] = [n["code"] for n in sc.get("notices", [])]
                entry["null_fields"] = [
                    n["field"] for n in sc.get("notices", []) if n["code"] == "null_argument_ignored"
                ]
                if entry["is_error"] != expect_error:
                    report["failures"].append(f"{name}: is_error={entry['is_error']}: {answer}")
            except Exception as e:  # noqa: BLE001 - report every failure
                entry["exception"] = f"{type(e).__name__}: {e}"
                report["failures"].append(f"{name}: {entry['exception']}")
            report["calls"].append(entry)
    finally:
        await client.close_all_sessions()
    print(json.dumps(report))
    return 0 if not report["failures"] else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
