#!/usr/bin/env bash
# The schema check test_kube.py runs on `agent-sandbox kube` manifests (npm, pinned).
exec "$(dirname "$0")/../kube-validator.sh" install >/dev/null
