// Command capi is strata's C ABI: built with `go build -buildmode=c-shared`,
// its //export functions, declared in the hand-written strata.h, are the
// whole surface the Python package (or any C caller) sees.
//
// Every export is a few lines around call(), which recovers panics and turns
// errors into a status code plus a message in the caller's buffer; see
// call.go. Handles are runtime/cgo.Handle values holding an engine; see
// handle.go. To add a function: declare it in strata.h, write the export
// here, and mirror it in the Python wrapper.
package main

// #include "strata.h"
import "C"

// Version is the library version reported by strata_version. The Python
// package's version must match (a test checks).
const Version = "0.1.0"

// main is required by -buildmode=c-shared and never runs.
func main() {}
