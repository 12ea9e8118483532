"""The task domain: statuses, legal transitions and the service that drives them.

Nothing in this package imports boto3; AWS lives behind the ports in ``ports``.
"""
