"""Jobs a task hands off (a child state machine, Batch, ECS, Glue, a callback URL), below both
the toolkit (``taskgate.tools``, which hands them off) and the domain (``taskgate.domain``,
which waits on them): the vocabulary (vocabulary.py), the registry of kinds (kinds.py), and
one module per kind with its job class, the reader of its failures and what the state machine
and the IAM need of it. The boto3 halves are in ``taskgate.adapters``.

The registry imports the kinds taskgate ships the first time it is read, so a cold start
that reads none pays for none.
"""
