"""The wire: JSON-RPC envelopes, the two protocol eras, and method dispatch."""
