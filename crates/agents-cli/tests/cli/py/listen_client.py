"""A 2026-07-28 client (the official Python SDK's `Client`, which probes
`server/discover` and adopts the modern protocol when the server speaks it)
that follows `agents mcp serve` through `subscriptions/listen`.

Usage: python listen_client.py UPDATE_JSON -- COMMAND [ARGS...]   (stdio: starts COMMAND)
       python listen_client.py UPDATE_JSON --url URL                (streamable HTTP)

Lists the tools, calls the proxied echo tool, opens a `subscriptions/listen` stream for tool-list changes,
runs UPDATE_JSON (an argv, e.g. `agents skill update FILE`), waits (bounded)
for the change event, lists the tools again. Prints one JSON object:
{"protocol", "honored", "before", "called", "update_code", "event", "after"}.
"""

import json
import os
import subprocess
import sys

import anyio
from mcp import Client, StdioServerParameters


def dump(result):
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


async def main():
    update = json.loads(sys.argv[1])
    if sys.argv[2] == "--url":
        server = sys.argv[3]
    else:
        command = sys.argv[3:]
        server = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with Client(server) as client:
        protocol = client.protocol_version
        before = dump(await client.list_tools())
        # A tool the gateway proxies: its result must be a valid 2026-07-28
        # result (`resultType`), or the SDK refuses it.
        echo = next(t["name"] for t in before["tools"] if "echo" in t["name"])
        called = dump(await client.call_tool(echo, {"message": "proxied hello"}))
        async with client.listen(tools_list_changed=True) as subscription:
            honored = subscription.honored.model_dump(mode="json", by_alias=True, exclude_none=True)
            done = await anyio.to_thread.run_sync(
                lambda: subprocess.run(update, capture_output=True, text=True))
            event = None
            with anyio.move_on_after(60):
                async for arrived in subscription:
                    event = type(arrived).__name__
                    break
        after = dump(await client.list_tools())
    print(json.dumps({
        "protocol": protocol,
        "honored": honored,
        "before": before,
        "called": called,
        "update_code": done.returncode,
        "update_stderr": done.stderr,
        "event": event,
        "after": after,
    }))


anyio.run(main)
