#!/bin/sh
# For events Claude Code may kill as it exits (StopFailure in -p mode): save stdin to the sleds spool first,
# with nothing but sh and cat, then let a detached node hand it to musher (which dedups by file name).
event="$1"
case "$event" in *[!A-Za-z]*|"") exit 0 ;; esac
if [ -n "$SLEDS_HOME" ]; then state="$SLEDS_HOME/state"; else state="${XDG_STATE_HOME:-$HOME/.local/state}/sleds"; fi
spool="$state/spool"
mkdir -p "$spool" 2>/dev/null && chmod 700 "$spool" 2>/dev/null
name="$(date +%s)000-$$-$(od -An -N4 -tx4 /dev/urandom 2>/dev/null | tr -d ' \n').$event.raw"
umask 077
cat > "$spool/.$name.tmp" && mv "$spool/.$name.tmp" "$spool/$name"
root="$(dirname "$0")/.."
(setsid nohup node "$root/../dist/cli/main.js" musher run --background </dev/null >/dev/null 2>&1 &) 2>/dev/null
exit 0
