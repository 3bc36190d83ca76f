"""Shared machinery: findings, rules, strict JSON, schemas, git, writes, configuration."""
