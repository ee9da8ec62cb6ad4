"""A real third-party MCP client (the official Python SDK) driving `agents mcp serve`.

Usage: python mcp_client.py SCRIPT_JSON -- COMMAND [ARGS...]

SCRIPT_JSON is a list of steps: {"list": true}, {"call": NAME, "arguments": {...}},
{"kill_upstream": MARKER} (SIGKILLs processes whose environment holds MARKER).
Prints one JSON object: {"steps": [...]} with each step's result.
"""

import json
import os
import signal
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def kill_marked(marker):
    killed = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read()
        except OSError:
            continue
        if marker.encode() in environ:
            try:
                os.kill(int(pid), signal.SIGKILL)
                killed += 1
            except OSError:
                pass
    return killed


async def main():
    steps = json.loads(sys.argv[1])
    command = sys.argv[3:]
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    out = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for step in steps:
                if "list" in step:
                    result = await session.list_tools()
                    out.append(result.model_dump(mode="json", by_alias=True, exclude_none=True))
                elif "call" in step:
                    result = await session.call_tool(step["call"], step.get("arguments"))
                    out.append(result.model_dump(mode="json", by_alias=True, exclude_none=True))
                elif "kill_upstream" in step:
                    out.append({"killed": kill_marked(step["kill_upstream"])})
    print(json.dumps({"steps": out}))


anyio.run(main)
