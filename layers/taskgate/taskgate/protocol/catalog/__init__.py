"""The catalogue both eras serve: resources (and 2025 subscriptions), prompts, completion,
and the caller's own tasks as they read them."""
