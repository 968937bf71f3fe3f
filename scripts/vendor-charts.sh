#!/bin/sh
# vendor-charts.sh — vendors the charting library the HTML report inlines
# (internal/htmlreport/assets): Apache ECharts' minified build, fetched with
# `npm pack` at the pinned version, with its licence, its NOTICE and the
# sha256 that TestVendoredChartsMatchChecksum checks against the embedded copy.
# Run it only to change the version: the copy is committed.
set -eu
VERSION=${ECHARTS_VERSION:-6.1.0}
cd "$(dirname "$0")/.."
dest=internal/htmlreport/assets
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "echarts@$VERSION" >/dev/null && tar -xzf "echarts-$VERSION.tgz")
mkdir -p "$dest"
cp "$tmp/package/dist/echarts.min.js" "$dest/echarts.min.js"
cp "$tmp/package/LICENSE" "$dest/echarts.LICENSE"
cp "$tmp/package/NOTICE" "$dest/echarts.NOTICE"
(cd "$dest" && sha256sum echarts.min.js > echarts.min.js.sha256)
echo "$VERSION" > "$dest/echarts.VERSION"
echo "vendored echarts $VERSION into $dest:"
cat "$dest/echarts.min.js.sha256"
