"""Jobs a task hands off (a child state machine, Batch, ECS, Glue, a callback URL): their
vocabulary, below both the toolkit (``taskgate.tools``, which builds them) and the domain
(``taskgate.domain``, which waits on them); the boto3 halves are in ``taskgate.adapters``."""
