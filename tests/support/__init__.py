"""Helpers shared by test modules: planted records, toy tasks, synthetic scenes, kernel inputs."""
