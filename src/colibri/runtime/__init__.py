"""The runtime: configuration, modes, two-phase boot and the stdio server."""
