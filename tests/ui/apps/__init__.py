"""Small Textual apps that host one screen or widget for Pilot and snapshot tests."""
