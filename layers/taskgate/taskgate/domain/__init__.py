"""The task domain and its lifecycle, with no AWS SDK and no HTTP in it.

``model`` (the task), ``transitions`` (the legal changes, a table), ``errors``,
``ports`` (what the domain needs from AWS), and the lifecycle that drives a
task: ``service`` (the API's side), ``worker`` (one step of the tool),
``sweeper`` (what no execution will finish), ``ending`` (the one fail path),
``results`` (results in the row or the bucket) and ``limits``.
"""
