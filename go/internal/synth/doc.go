// Package synth generates deterministic vector data sets for tests:
// Gaussian mixtures, which have the cluster structure of real embeddings
// (uniform noise makes every method look alike), and exact k-NN ground
// truth computed in float64.
package synth
