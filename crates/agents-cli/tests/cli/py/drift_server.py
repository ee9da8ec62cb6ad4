"""An MCP server on the official Python SDK whose `create_issue` description
is read from a file when it starts: the drift tests edit that file between
two refreshes, as a server that changes a reviewed tool would."""

import sys

from mcp.server.mcpserver import MCPServer

with open(sys.argv[1], encoding="utf-8") as file:
    DESCRIPTION = file.read().strip()

server = MCPServer("drift")


@server.tool(name="create_issue", description=DESCRIPTION)
def create_issue(title: str) -> str:
    return title


@server.tool(name="list_issues", description="List the open issues")
def list_issues() -> str:
    return ""


if __name__ == "__main__":
    server.run()
