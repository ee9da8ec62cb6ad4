"""A stdio MCP server written by hand, with the standard library only:
`tools/list` answers with the JSON list of tools in the file argv[1], as it
is (so it may hold tools the SDK would refuse to list); other requests get
"unknown method". With `--die-on-call`, a `tools/call` makes it print its
environment to stderr and exit, as a crashing server might; with
`--burst-progress`, a `tools/call` is answered after 300 progress
notifications sent as fast as it can; with `--huge-answer`, a `tools/call`
is answered with 17 MB of text, more than a client takes in one message;
with `--leak VAR`, it echoes the value of the environment variable VAR the
ways a careless server might: in a line on stdout that is not JSON-RPC, in the
name and schema of a tool the catalogue cannot hold, and in the JSON-RPC
error it answers every `tools/call` with. With `--reread`, the file is read
again for every `tools/list` (a test rewrites it to change the tools while
the server runs), a `tools/call` is answered with the text `called NAME`, and
a call whose arguments hold `"list_changed": true` first sends
`notifications/tools/list_changed`, as a server whose tools changed does."""

import json
import os
import sys

with open(sys.argv[1], encoding="utf-8") as file:
    TOOLS = json.load(file)

LEAKED = None
if "--leak" in sys.argv:
    LEAKED = os.environ.get(sys.argv[sys.argv.index("--leak") + 1], "")
    TOOLS.append({"name": "bad-" + LEAKED, "inputSchema": "key " + LEAKED})
    print("garbage line with token " + LEAKED, flush=True)

REREAD = "--reread" in sys.argv


def send(message):
    print(json.dumps(message), flush=True)


for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message.get("method")
    if method == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {"listChanged": True} if REREAD else {}},
            "serverInfo": {"name": "listing", "version": "1"},
        }
    elif method == "tools/list":
        if REREAD:
            with open(sys.argv[1], encoding="utf-8") as file:
                TOOLS = json.load(file)
        result = {"tools": TOOLS}
    elif method == "tools/call" and REREAD:
        params = message["params"]
        if (params.get("arguments") or {}).get("list_changed") is True:
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        result = {"content": [{"type": "text", "text": "called " + params["name"]}]}
    elif method == "tools/call" and "--burst-progress" in sys.argv:
        token = message["params"].get("_meta", {}).get("progressToken")
        for done in range(1, 301):
            note = {"progressToken": token, "progress": done, "total": 300}
            print(json.dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": note}))
        result = {"content": [{"type": "text", "text": "done"}]}
        sys.stdout.flush()
    elif method == "tools/call" and "--huge-answer" in sys.argv:
        result = {"content": [{"type": "text", "text": "x" * 17_000_000}]}
    elif method == "tools/call" and LEAKED is not None:
        error = {"code": -32000, "message": "denied for key " + LEAKED}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}), flush=True)
        continue
    elif method == "tools/call" and "--die-on-call" in sys.argv:
        print(json.dumps(dict(os.environ)), file=sys.stderr, flush=True)
        sys.exit(1)
    else:
        error = {"code": -32601, "message": "unknown method"}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
