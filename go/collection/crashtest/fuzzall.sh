#!/bin/sh
# Runs every fuzz target (storage formats, filters, the schema readers, the
# server's request reader, the text analyzer) for a fixed number of
# executions each: ./go/collection/crashtest/fuzzall.sh [COUNT] (default 50000).
# Targets whose single execution builds and checks a whole index file run a
# tenth of COUNT (SLOW_DIVISOR), so that the CI tier stays within minutes.
# go test -fuzz takes one target per package per run, hence one run each.
set -eu
count="${1:-50000}"
cd "$(dirname "$0")/../../.."
for target in \
	./go/collection:FuzzDecodeRecord \
	./go/collection:FuzzParseVectorFields \
	./go/collection:FuzzParseSparseFields \
	./capi:FuzzParseSchema \
	./go/collection/wal:FuzzReplay \
	./go/collection/wal:FuzzDecodeHead \
	./go/collection/meta:FuzzParseFilter \
	./go/collection/meta:FuzzParseDocument \
	./go/collection/meta:FuzzImport \
	./go/collection/meta:FuzzCheckJSONText \
	./go/collection/snapshot:FuzzDecodeCurrent \
	./go/collection/snapshot:FuzzDecodeManifest \
	./go/collection/snapshot:FuzzReadMetadata \
	./go/collection/snapshot:FuzzReadIDTable \
	./go/collection/snapshot:FuzzReadStateRun \
	./go/collection/snapshot:FuzzReadExpiries \
	./go/collection/snapshot:FuzzReadDeletes \
	./go/indexfile:FuzzRead \
	./go/hnsw:FuzzLoadValidSections \
	./go/server:FuzzDecodeRequest \
	./go/npy:FuzzReadFloat16 \
	./go/collection/text:FuzzAnalyzer
do
	pkg="${target%%:*}" name="${target##*:}"
	n="$count"
	case "$name" in FuzzLoadValidSections|FuzzReadMetadata) n=$((count / ${SLOW_DIVISOR:-10})) ;; esac
	echo "== $name ($pkg), ${n}x"
	go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "${n}x"
done
