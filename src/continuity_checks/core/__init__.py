"""Shared machinery: findings and rules, strict JSON, schemas, git, hashing, writes, configuration."""
