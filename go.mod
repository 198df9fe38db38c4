module github.com/strata-db/strata

go 1.26.0

require (
	github.com/RoaringBitmap/roaring/v2 v2.30.0
	github.com/klauspost/cpuid/v2 v2.4.2
	github.com/kljensen/snowball v0.10.0
	golang.org/x/sys v0.50.0
)

require (
	github.com/bits-and-blooms/bitset v1.24.4 // indirect
	github.com/mschoch/smat v0.2.0 // indirect
)
