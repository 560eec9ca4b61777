"""askdb as an MCP server (issue 37): `server` builds the tools, resources and prompt over the core,
`tools` is what each tool does, `results` what each returns, and `http` serves them at /mcp on the
web app; `python -m app mcp` serves them over stdio (app/cli.py)."""
