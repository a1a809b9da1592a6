"""Registered methods, one file each: methods/<family>/<method>.py."""
