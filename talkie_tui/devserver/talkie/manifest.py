"""The §1 manifest of this server."""

from __future__ import annotations

from typing import Any

from talkie_tui.devserver.talkie.assets import ACCENT
from talkie_tui.devserver.talkie.config import ServerConfig

LOGO_PATH = "/talkie/logo.png"
CARD_BLOCKS = ["heading", "text", "fields", "list", "link", "file", "badge"]
ENDPOINTS = {
    "status": "/api/talkie/status",
    "run": "/api/talkie/run",
    "cancelRun": "/api/talkie/runs/{runId}/cancel",
    "threads": "/api/talkie/threads",
    "thread": "/api/talkie/threads/{threadId}",
    "action": "/api/talkie/actions/{actionId}",
    "decision": "/api/talkie/actions/{actionId}/decision",
}
VOICE_ENDPOINTS = {
    "voiceSessions": "/api/talkie/voice/sessions",
    "voiceTool": "/api/talkie/voice/sessions/{voiceSessionId}/tools/{name}",
    "voiceTranscript": "/api/talkie/voice/sessions/{voiceSessionId}/transcript",
    "voiceUsage": "/api/talkie/voice/sessions/{voiceSessionId}/usage",
}
# The fake provider listens on loopback only (its ICE, too: notes §4.4).
FAKE_VOICE_HOST = "127.0.0.1"


def build_manifest(config: ServerConfig, server_id: str, origin: str) -> dict[str, Any]:
    """The manifest as served from `origin` (scheme://host[:port] the request came to)."""
    auth: dict[str, Any] = {}
    if config.oauth_issuer:
        auth["oauth"] = {"issuer": config.oauth_issuer, "scopes": ["talkie", "offline_access"]}
    if config.dev_token is not None:
        auth["token"] = {"hint": "The token given to `talkie serve --dev-token`."}
    endpoints = dict(ENDPOINTS)
    capabilities: dict[str, Any] = {}
    # Voice endpoints exist only with a provider behind them (§1: omitted without voice).
    if config.fake_voice:
        endpoints.update(VOICE_ENDPOINTS)
        capabilities["voice"] = {
            "transports": ["webrtc"],
            "eventProtocols": ["openai-realtime/1"],
            "signalingHosts": [FAKE_VOICE_HOST],
        }
    capabilities["actions"] = {"voiceConfirm": True}
    capabilities["cards"] = {"blocks": list(CARD_BLOCKS)}
    return {
        "spec": "talkie/1",
        "issuer": origin,
        "serverId": server_id,
        "name": "Talkie Demo CRM",
        "description": "Sales assistant of the Talkie demo CRM (sample data)",
        "locale": config.locale,
        "brand": {"logo": LOGO_PATH, "accent": ACCENT},
        "auth": auth,
        "endpoints": endpoints,
        "capabilities": capabilities,
        "limits": {"maxMessageChars": config.max_message_chars},
        "testMode": config.test_mode,
    }
