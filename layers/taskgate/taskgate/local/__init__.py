"""The embedded default: moto in-process, the real state machine, the worker in-process.

Development-only; never imported by the Lambda functions.
"""
