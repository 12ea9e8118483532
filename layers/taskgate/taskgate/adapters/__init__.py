"""One adapter per AWS service; the only modules that import boto3."""
