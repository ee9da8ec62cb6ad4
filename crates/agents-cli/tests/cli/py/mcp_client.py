"""A real third-party MCP client (the official Python SDK) driving `agents mcp serve`.

Usage: python mcp_client.py SCRIPT_JSON -- COMMAND [ARGS...]   (stdio: starts COMMAND)
       python mcp_client.py SCRIPT_JSON --url URL [--token TOKEN]  (streamable HTTP)

SCRIPT_JSON is a list of steps: {"list": true}, {"call": NAME, "arguments": {...}} (with
"progress": true, the progress notifications received go in the result's "progress_seen"),
{"kill_upstream": MARKER} (SIGKILLs processes whose environment holds MARKER),
{"count_upstream": MARKER, "after": SECONDS} (counts them, after waiting),
{"together": [{"call": NAME, "arguments": {...}, "after": SECONDS}, ...]} (calls at once;
records each result and how long after the start it was answered),
{"run": [ARGV...]} (runs a command, e.g. `agents skill update`, and records its exit code),
{"wait_list_changed": SECONDS} (waits, bounded, for notifications/tools/list_changed;
records whether one arrived), {"wait_resources_changed": SECONDS} (the same for
notifications/resources/list_changed), {"wait_log": PATH, "contains": TEXT, "timeout": SECONDS}
(waits, bounded, until the file PATH, e.g. the gateway's stderr, holds TEXT; records
whether it did), {"http_status": {"headers": {...}}} (POSTs an initialize
request to URL with only those headers and records the HTTP status),
{"resources": true} (resources/list), {"read": URI} (resources/read),
{"request": METHOD, "params": {...}} (any request, e.g. the SEP-2640 `skills/list`,
sent through the SDK's generic `send_request`; records the raw result, or {"error": ...}).
Prints one JSON object: {"capabilities": <server capabilities from initialize>,
"instructions": <the server's instructions from initialize>, "steps": [...]} with each
step's result.
"""

import json
import os
import signal
import sys
from typing import Any

import subprocess
import time
import urllib.error
import urllib.request

from pydantic import TypeAdapter

import anyio
import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client


class RawRequest(types.Request[dict[str, Any] | None, str]):
    """A request the SDK has no type for; its params are sent as given."""


def marked(marker):
    """The pids whose environment holds MARKER."""
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read()
        except OSError:
            continue
        if marker.encode() in environ:
            pids.append(int(pid))
    return pids


def kill_marked(marker):
    killed = 0
    for pid in marked(marker):
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except OSError:
            pass
    return killed


async def together(session, calls):
    """Runs CALLS at once (each may wait `after` seconds first); records each
    result with the seconds from the start to its answer."""
    start = time.monotonic()
    results = [None] * len(calls)

    async def one(i, call):
        await anyio.sleep(call.get("after", 0))
        result = await session.call_tool(call["call"], call.get("arguments"))
        results[i] = {
            "result": result.model_dump(mode="json", by_alias=True, exclude_none=True),
            "answered_after": time.monotonic() - start,
        }

    async with anyio.create_task_group() as group:
        for i, call in enumerate(calls):
            group.start_soon(one, i, call)
    return results


def http_status(url, headers):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}}).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        **headers,
    })
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as err:
        return err.code


async def run_steps(session, steps, changed, url):
    out = []
    for step in steps:
        if "list" in step:
            result = await session.list_tools()
            out.append(result.model_dump(mode="json", by_alias=True, exclude_none=True))
        elif "call" in step:
            progress = []

            async def on_progress(done, total, message):
                progress.append([done, total])

            callback = on_progress if step.get("progress") else None
            result = await session.call_tool(
                step["call"], step.get("arguments"), progress_callback=callback)
            dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
            if step.get("progress"):
                dumped["progress_seen"] = progress
            out.append(dumped)
        elif "resources" in step:
            result = await session.list_resources()
            out.append(result.model_dump(mode="json", by_alias=True, exclude_none=True))
        elif "read" in step:
            try:
                result = await session.read_resource(step["read"])
                out.append(result.model_dump(mode="json", by_alias=True, exclude_none=True))
            except Exception as err:  # an error response is a result to check
                out.append({"error": f"{type(err).__name__}: {err}"})
        elif "request" in step:
            request = RawRequest(method=step["request"], params=step.get("params"))
            try:
                out.append(await session.send_request(request, TypeAdapter(dict)))
            except Exception as err:
                out.append({"error": f"{type(err).__name__}: {err}"})
        elif "kill_upstream" in step:
            out.append({"killed": kill_marked(step["kill_upstream"])})
        elif "count_upstream" in step:
            await anyio.sleep(step.get("after", 0))
            out.append({"running": len(marked(step["count_upstream"]))})
        elif "together" in step:
            out.append(await together(session, step["together"]))
        elif "run" in step:
            done = await anyio.to_thread.run_sync(
                lambda: subprocess.run(step["run"], capture_output=True, text=True))
            out.append({"code": done.returncode, "stderr": done.stderr})
        elif "wait_list_changed" in step:
            arrived = False
            with anyio.move_on_after(step["wait_list_changed"]):
                await changed.wait()
                arrived = True
            changed.reset()
            out.append({"list_changed": arrived})
        elif "wait_resources_changed" in step:
            arrived = False
            with anyio.move_on_after(step["wait_resources_changed"]):
                await changed.resources.wait()
                arrived = True
            changed.resources = anyio.Event()
            out.append({"resources_changed": arrived})
        elif "wait_log" in step:
            found = False
            deadline = time.monotonic() + step.get("timeout", 30)
            while time.monotonic() < deadline:
                try:
                    with open(step["wait_log"], encoding="utf-8", errors="replace") as log:
                        found = step["contains"] in log.read()
                except OSError:
                    pass
                if found:
                    break
                await anyio.sleep(0.1)
            out.append({"found": found})
        elif "http_status" in step:
            status = await anyio.to_thread.run_sync(
                lambda: http_status(url, step["http_status"].get("headers", {})))
            out.append({"status": status})
    return out


class Changed:
    """Set when notifications/tools/list_changed arrives (`resources`: when
    notifications/resources/list_changed does)."""

    def __init__(self):
        self.event = anyio.Event()
        self.resources = anyio.Event()

    async def handler(self, message):
        method = getattr(message, "method", None)
        if method == "notifications/tools/list_changed":
            self.event.set()
        elif method == "notifications/resources/list_changed":
            self.resources.set()

    async def wait(self):
        await self.event.wait()

    def reset(self):
        self.event = anyio.Event()


async def main():
    steps = json.loads(sys.argv[1])
    changed = Changed()
    if sys.argv[2] == "--url":
        url = sys.argv[3]
        headers = {}
        if len(sys.argv) > 5 and sys.argv[4] == "--token":
            headers["Authorization"] = f"Bearer {sys.argv[5]}"
        async with create_mcp_http_client(headers=headers) as client:
            async with streamable_http_client(url, http_client=client) as (read, write):
                async with ClientSession(read, write, message_handler=changed.handler) as session:
                    init = await session.initialize()
                    out = await run_steps(session, steps, changed, url)
    else:
        command = sys.argv[3:]
        params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, message_handler=changed.handler) as session:
                init = await session.initialize()
                out = await run_steps(session, steps, changed, None)
    capabilities = init.capabilities.model_dump(mode="json", by_alias=True, exclude_none=True)
    print(json.dumps({"capabilities": capabilities, "instructions": init.instructions,
                      "steps": out}))


anyio.run(main)
