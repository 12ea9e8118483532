"""What travels: JSON-RPC envelopes, headers, params models, the one error table, SSE, the
sealed tokens (requestState, cursors), the notifications a task's news becomes, and the
protocol versions with the era that serves each. Nothing here knows an era."""
