//go:build !amd64 || noasm

package kernels

func dot(a, b []float32) float32 { return dotGeneric(a, b) }
func l2(a, b []float32) float32  { return l2Generic(a, b) }
func l1(a, b []float32) float32  { return l1Generic(a, b) }
func dotU8(a, b []uint8) uint32  { return dotU8Generic(a, b) }
func l2U8(a, b []uint8) uint32   { return l2U8Generic(a, b) }

func floatPath() path { return pathGeneric }
func u8Path() path    { return pathGeneric }

// detectedPaths lists the paths this build and CPU can run, slowest first.
func detectedPaths() []path { return []path{pathGeneric} }

// setPath is the test hook of the amd64 build; here there is only one path.
func setPath(path) (restore func()) { return func() {} }

func l2Rows(q, rows []float32, ids []uint32, out []float32)  { l2RowsLoop(q, rows, ids, out) }
func dotRows(q, rows []float32, ids []uint32, out []float32) { dotRowsLoop(q, rows, ids, out) }
