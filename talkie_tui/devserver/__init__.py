"""The talkie/1 reference server: test mode, a scripted demo CRM agent, SQLite storage."""
