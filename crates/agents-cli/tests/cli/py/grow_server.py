"""An MCP server on the official Python SDK whose tools change while it runs:
calling `grow` adds the tool `extra` and sends
`notifications/tools/list_changed`. The tool lives in this process only, so a
gateway must list it on the session that announced it (a fresh process would
not have it)."""

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("grow")


def extra(text: str) -> str:
    return f"extra: {text}"


@server.tool(name="echo", description="Say it back")
def echo(message: str) -> str:
    return message


@server.tool(name="grow", description="Add the tool `extra`")
async def grow(ctx: Context) -> str:
    server.add_tool(extra, name="extra", description="Added at run time")
    await ctx.session.send_tool_list_changed()
    return "grown"


if __name__ == "__main__":
    server.run()
