#!/usr/bin/env bash
# Installs the Debian packages the test suite needs. Runs as root on Debian (CI and fresh
# machines); elsewhere it prints what is missing and leaves the machine alone.
set -euo pipefail

packages=(
  # Each capability adds its packages here.
  python3-venv
  gnome-keyring dbus-daemon  # a real Secret Service for the keyring test (dbus-run-session)
  # Real audio without a sound card (tests/voice/pulse.py): PortAudio for sounddevice, a private
  # PulseAudio daemon with null sinks, its pactl/paplay/parec tools, the ALSA "pulse" plugin
  # through which Debian's PortAudio (an ALSA client) reaches it, and espeak-ng to speak into
  # the null-sink "microphone".
  libportaudio2 pulseaudio pulseaudio-utils libasound2-plugins espeak-ng
)
# The authorization server of the sign-in tests (oidc-provider) runs on Node.js; machines of
# this kind usually have it, so Debian's node is installed only when none is on the PATH.
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)
if [ "${1:-}" = "screenshots" ]; then
  packages=(librsvg2-bin fonts-dejavu-core)  # SVG to PNG for `make screenshots`
fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "Installing system packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "Missing system packages (install them, or tests that need them will skip): ${missing[*]}"
fi
