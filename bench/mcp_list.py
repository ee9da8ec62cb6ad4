"""Baseline for the MCP case: the official MCP Python SDK lists the tools of
a stdio server (`initialize` + paginated `tools/list`), like `agents mcp
refresh`. Usage: python mcp_list.py COMMAND [ARG...]; prints the tool count."""

import asyncio
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import PaginatedRequestParams


async def main(command: str, args: list[str]) -> int:
    server = StdioServerParameters(command=command, args=args)
    tools = []
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            cursor = None
            while True:
                params = PaginatedRequestParams(cursor=cursor) if cursor else None
                result = await session.list_tools(params=params)
                tools.extend(result.tools)
                cursor = result.next_cursor
                if not cursor:
                    break
    print(len(tools))
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("usage: mcp_list.py COMMAND [ARG...]", file=sys.stderr)
        sys.exit(2)
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2:])))
