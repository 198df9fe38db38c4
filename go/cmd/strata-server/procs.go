package main

// chooseProcs decides GOMAXPROCS, the threads running Go code at once
// (and with it how many goroutines an Add inserts with): the --gomaxprocs
// flag when set (> 0); else the runtime's own choice when it did not come
// from the machine's CPU count (a GOMAXPROCS environment variable, or a
// cgroup CPU limit below the CPUs, where a spare thread would only spend
// the quota sooner and be throttled); else one more than the CPUs.
//
// Why one spare: a server on a small machine shares its cores with its
// clients (the application, an embedding model, a load generator). When
// the kernel preempts one of the server's threads in their favour, the
// requests queued on that thread's Go scheduler wait until it runs again;
// with one thread more than the cores another thread takes them over. A
// runtime trace of the 2-core load test (32 connections, query): 1,710
// pauses over 100 µs on the two schedulers in 2 s, and goroutines woken by
// the network waited 4.6 ms at p99 to run. Query at 32 connections with
// the load generator on the same 2 cores, 8 alternated runs
// (bench/loadgen, 2026-12-01): p99 5.34-6.98 ms (median 5.57) with 2
// threads, 4.55-5.21 ms (median 4.89) with 3, and 22.1k -> 23.8k req/s.
// Alone (BenchmarkQueryOversubscribed in go/collection, 32 goroutines
// querying in process, 10 alternated runs): 3 threads cost 2 % per query,
// within the noise (±6 %); 4 threads cost 8 %, which is why it is one and
// not twice the cores.
func chooseProcs(flagProcs int, envSet bool, runtimeProcs, cpus int) (n int, why string) {
	switch {
	case flagProcs > 0:
		return flagProcs, "--gomaxprocs"
	case envSet:
		return runtimeProcs, "the GOMAXPROCS environment variable"
	case runtimeProcs < cpus:
		return runtimeProcs, "the runtime's choice under a CPU limit"
	default:
		return cpus + 1, "one more than the CPUs"
	}
}
