#!/usr/bin/env bash
# Unpacks Debian's prometheus package (prometheus + promtool) into DEST without installing anything:
# `apt-get download` fetches the .deb as any user, `dpkg -x` extracts it. Idempotent: an existing
# DEST/usr/bin/promtool is kept. Used by the helm module's build (promtool checks) and by the e2e
# MetricsCatalogTests (a real Prometheus scraping the local stack).
set -euo pipefail

dest=${1:?usage: fetch-prometheus.sh DEST}
if [[ -x "$dest/usr/bin/promtool" && -x "$dest/usr/bin/prometheus" ]]; then
    exit 0
fi
for tool in apt-get dpkg; do
    command -v "$tool" >/dev/null || { echo "fetch-prometheus: $tool not found (Debian/Ubuntu needed)" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The download directory must be writable by apt's sandbox user when run as root; a warning otherwise.
chmod 755 "$work"
if ! (cd "$work" && apt-get download -q prometheus >"$work/apt.log" 2>&1); then
    # A fresh machine may have no package lists: fetch them into a private directory (no root, nothing
    # of the system's apt state touched) and try once more with those.
    mkdir -p "$work/lists/partial"
    private=(-o "Dir::State::Lists=$work/lists" -o Debug::NoLocking=1)
    if ! (cd "$work" && apt-get "${private[@]}" update -q >>"$work/apt.log" 2>&1 \
            && apt-get "${private[@]}" download -q prometheus >>"$work/apt.log" 2>&1); then
        cat "$work/apt.log" >&2
        echo "fetch-prometheus: 'apt-get download prometheus' failed, also after fetching fresh package lists" >&2
        exit 1
    fi
fi
deb=$(ls "$work"/prometheus_*.deb)
mkdir -p "$dest"
dpkg -x "$deb" "$dest"
"$dest/usr/bin/promtool" --version 2>&1 | head -1
