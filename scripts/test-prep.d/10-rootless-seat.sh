#!/usr/bin/env bash
# The rootless seat the limits_unenforced tests need (user, storage, image, API service).
exec "$(dirname "$0")/../rootless-seat.sh" start >/dev/null
