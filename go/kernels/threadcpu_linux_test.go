package kernels

import "golang.org/x/sys/unix"

// threadCPUSeconds is the CPU time of the calling thread (lock it first):
// steadier than wall time on a shared machine.
func threadCPUSeconds() float64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
