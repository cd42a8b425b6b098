"""The talkie/1 reference server.

Manifest and routes, runs with their event logs, cards, §8 actions, test mode (§11), the
scripted demo CRM agent with its data and files, §10 voice with a fake realtime provider
(`fake_voice/`), the dev token and OAuth (introspection) sign-in, its SQLite tables and its
settings (`ServerConfig`). `runner.serve_in_thread(config)` and `runner.run_forever(config, …)`
start it.
"""
