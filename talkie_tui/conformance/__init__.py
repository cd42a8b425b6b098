"""`talkie conformance`: the talkie/1 §11 checks against any server in test mode."""
