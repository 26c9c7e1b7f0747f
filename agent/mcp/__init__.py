"""MCP client: the tools, prompts and resources of Model Context Protocol servers (docs/mcp.md).

Built on the official ``mcp`` SDK, which is imported only once a session has a server to start:

- ``spec``: one ``ServerSpec`` type, parsed from every source (ACP, LSP, TOML, ``.mcp.json``);
- ``sources``: the configuration files, with the workspace trust rule;
- ``naming``, ``schema``, ``results``: tool names, input schemas and call results as providers take them;
- ``connection``: one server's lifecycle (start timeout, crash, restart with backoff, calls);
- ``manager``: the servers of one session, started in the background, their tools in the registry;
- ``tools``, ``prompts``, ``mentions``: the adapters (tools, slash commands, @-mentions of resources).
"""
