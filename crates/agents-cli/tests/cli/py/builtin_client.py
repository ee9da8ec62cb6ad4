"""The official Python SDK client calling the builtin tools `agents mcp serve` runs itself.

Usage: python builtin_client.py CONFIG_JSON -- COMMAND [ARGS...]   (stdio: starts COMMAND)
       python builtin_client.py CONFIG_JSON --url URL              (streamable HTTP, no token)

CONFIG_JSON (or @PATH, the file holding it): {"roots": [DIR, ...] or absent (the client then offers no roots capability),
"elicitation": "accept" | "decline" | "cancel" or absent (no elicitation capability),
"steps": [...]}. Steps: {"list": true}; {"call": NAME, "arguments": {...}} (with "until": TEXT, called
again, bounded, until its result holds TEXT; a JSON-RPC error is the step's {"error": TEXT};
"arguments_file": PATH instead of "arguments" reads them from that JSON file, for arguments too
large for a command line: Linux takes at most 128 KiB in one argv word);
{"together": [{"call": NAME, "arguments": {...}}, ...]} (calls at once);
{"set_roots": [DIR, ...]} (changes the roots and sends notifications/roots/list_changed);
{"count": MARKER, "after": SECONDS[, "within": SECONDS]} (counts the processes whose command line
holds MARKER; with "within", again until none is left or that long has passed);
{"wait_list_changed": SECONDS} (waits, bounded, for notifications/tools/list_changed; records
whether one arrived since the last such step).
Prints {"instructions": ..., "capabilities": <the server's>, "elicited": [the messages of the
elicitation requests], "roots_listed": <how many times roots/list was asked>,
"list_changed": <how many notifications/tools/list_changed arrived>, "steps": [...]}.
"""

import json
import os
import sys
import warnings

import anyio
import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from mcp.shared.exceptions import MCPError

warnings.simplefilter("ignore")


def processes_with(marker):
    found = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found += 1
    return found


def arguments(step):
    """A call step's arguments: "arguments", or the JSON file "arguments_file" names."""
    if "arguments_file" in step:
        with open(step["arguments_file"], encoding="utf-8") as f:
            return json.load(f)
    return step.get("arguments")


def dumped(result):
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


class Client:
    def __init__(self, config):
        self.roots = config.get("roots")
        self.answer = config.get("elicitation")
        self.elicited = []
        self.roots_listed = 0
        self.list_changed = 0
        self.changed = anyio.Event()

    async def on_message(self, message):
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self.list_changed += 1
            self.changed.set()

    async def list_roots(self, context):
        self.roots_listed += 1
        return types.ListRootsResult(
            roots=[types.Root(uri=f"file://{path}") for path in self.roots])

    async def elicit(self, context, params):
        self.elicited.append(params.message)
        if self.answer == "accept":
            return types.ElicitResult(action="accept", content={})
        return types.ElicitResult(action=self.answer)

    def callbacks(self):
        callbacks = {"message_handler": self.on_message}
        if self.roots is not None:
            callbacks["list_roots_callback"] = self.list_roots
        if self.answer is not None:
            callbacks["elicitation_callback"] = self.elicit
        return callbacks


async def run_steps(session, client, steps):
    out = []
    for step in steps:
        if "list" in step:
            out.append(dumped(await session.list_tools()))
        elif "call" in step:
            # With "until": TEXT, called again (up to 100 times, 50 ms apart) until the
            # result holds TEXT: a notification sent before it may be handled after it.
            for _ in range(100 if "until" in step else 1):
                try:
                    result = dumped(await session.call_tool(step["call"], arguments(step)))
                except MCPError as err:
                    # A JSON-RPC error (an unknown tool): recorded, not raised.
                    result = {"error": str(err)}
                if step.get("until", "") in json.dumps(result):
                    break
                await anyio.sleep(0.05)
            out.append(result)
        elif "together" in step:
            results = [None] * len(step["together"])

            async def one(i, call):
                results[i] = dumped(await session.call_tool(call["call"], arguments(call)))

            async with anyio.create_task_group() as group:
                for i, call in enumerate(step["together"]):
                    group.start_soon(one, i, call)
            out.append(results)
        elif "set_roots" in step:
            client.roots = step["set_roots"]
            await session.send_roots_list_changed()
            out.append({"roots": client.roots})
        elif "count" in step:
            # With "within": SECONDS, counted again (every 50 ms, up to that long) until
            # none is left: a process killed is gone once the kernel has run its exit,
            # which on a loaded machine can come after "after".
            await anyio.sleep(step.get("after", 0))
            running = processes_with(step["count"])
            for _ in range(int(step.get("within", 0) * 20)):
                if running == 0:
                    break
                await anyio.sleep(0.05)
                running = processes_with(step["count"])
            out.append({"running": running})
        elif "wait_list_changed" in step:
            arrived = False
            with anyio.move_on_after(step["wait_list_changed"]):
                await client.changed.wait()
                arrived = True
            client.changed = anyio.Event()
            out.append({"list_changed": arrived})
    return out


async def main():
    if sys.argv[1].startswith("@"):
        with open(sys.argv[1][1:], encoding="utf-8") as f:
            config = json.load(f)
    else:
        config = json.loads(sys.argv[1])
    client = Client(config)
    if sys.argv[2] == "--url":
        async with create_mcp_http_client() as http:
            async with streamable_http_client(sys.argv[3], http_client=http) as (read, write):
                async with ClientSession(read, write, **client.callbacks()) as session:
                    init = await session.initialize()
                    out = await run_steps(session, client, config["steps"])
    else:
        command = sys.argv[3:]
        params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, **client.callbacks()) as session:
                init = await session.initialize()
                out = await run_steps(session, client, config["steps"])
    print(json.dumps({"instructions": init.instructions,
                      "capabilities": dumped(init.capabilities),
                      "elicited": client.elicited, "roots_listed": client.roots_listed,
                      "list_changed": client.list_changed, "steps": out}))


anyio.run(main)
