"""What can go wrong while signing in, in words for the user."""

from __future__ import annotations

from talkie_tui.core.errors import TalkieError

__all__ = ["CallbackRejected", "GrantInvalid", "SignInCancelled", "SignInError"]


class SignInError(TalkieError):
    """Signing in failed; `message` says why (the sign-in server's words where it gave any)."""

    def __init__(self, message: str, *, code: str = "", retryable: bool | None = None) -> None:
        super().__init__(message, retryable=retryable)
        self.code = code


class CallbackRejected(SignInError):
    """A redirect that came back to talkie was not the answer to this sign-in (state or issuer)."""


class GrantInvalid(SignInError):
    """The refresh token is no longer accepted (expired, revoked, replayed): sign in again."""


class SignInCancelled(SignInError):
    """The person cancelled, or nobody answered in time."""
