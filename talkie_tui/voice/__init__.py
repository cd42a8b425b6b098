"""Voice: push-to-talk over WebRTC to the speech provider, and the §10.4 consent window."""
