"""View builders: the pages' views, shared by the page routes and the MCP tools."""
