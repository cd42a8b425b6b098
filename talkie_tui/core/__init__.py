"""What every protocol and layer shares: server text made safe, and the error family."""
