"""One adapter per AWS service; the only modules that import the AWS SDK (botocore)."""
