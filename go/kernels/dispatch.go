package kernels

// Dot returns the dot product of a and b[:len(a)].
func Dot(a, b []float32) float32 { return dotGeneric(a, b) }

// L2Squared returns the squared Euclidean distance between a and b[:len(a)].
func L2Squared(a, b []float32) float32 { return l2Generic(a, b) }
