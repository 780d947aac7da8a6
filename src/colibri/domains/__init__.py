"""One package per domain: models, handlers and repository side by side; MCP never appears here."""
