#!/bin/sh
# ensure-chromium.sh — makes sure the headless browser the browser tests
# drive is installed: Debian's chromium package at /usr/bin/chromium.
# Nothing is done when it is there. Otherwise it is installed with apt-get
# (as root, or through sudo); when that cannot be done the script says why
# and exits 0, and the browser tests skip with the same reason.
set -u
CHROMIUM=${LADDER_CHROMIUM:-/usr/bin/chromium}
if [ -x "$CHROMIUM" ]; then
	exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "ensure-chromium: $CHROMIUM is missing and this system has no apt-get; install Chromium and set LADDER_CHROMIUM to its path" >&2
	exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		sudo="sudo -n"
	else
		echo "ensure-chromium: $CHROMIUM is missing and installing it needs root: run 'apt-get install -y chromium' as root" >&2
		exit 0
	fi
fi
echo "ensure-chromium: installing Debian's chromium package for the browser tests" >&2
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get install -y --no-install-recommends chromium >/dev/null 2>&1; then
	$sudo apt-get update >/dev/null 2>&1
	$sudo apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 ||
		echo "ensure-chromium: apt-get install chromium failed; the browser tests will skip" >&2
fi
exit 0
